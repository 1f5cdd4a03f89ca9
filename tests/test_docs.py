"""Docs that cannot rot: the README example runs, the CLI reference matches --help, every
setting is documented."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import click
import pytest

from afteraction.cli import main
from afteraction.settings import SETTINGS
from tests._golden import assert_golden

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(kind: str) -> list[str]:
    """Fenced code blocks of one info string, in order."""
    found: list[tuple[str, str]] = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```$", README, flags=re.S | re.M):
        found.append((match.group(1), match.group(2)))
    return [body for info, body in found if info == kind]


def test_readme_python_example_prints_what_readme_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    example = next(b for b in _blocks("python") if "mem.run(" in b)
    shown = next(b for b in _blocks("") if b.startswith("=== BEGIN REFERENCE"))
    monkeypatch.setenv("AFTERACTION_DATABASE_URL", str(tmp_path / "readme.db"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example, "README.md", "exec"), {})
    assert out.getvalue() == shown + "\n"


def cli_reference() -> str:
    parts = ["# Command-line reference\n\nGenerated from `afteraction --help`; a test keeps it current.\n"]
    ctx = click.Context(
        main, info_name="afteraction", terminal_width=100, max_content_width=100, **main.context_settings
    )
    parts.append(f"## afteraction\n\n```\n{main.get_help(ctx)}\n```\n")
    parts.extend(_commands(main, ctx, "afteraction"))
    return "\n".join(parts)


def _commands(group: click.Group, parent: click.Context, prefix: str) -> list[str]:
    """Every command's help, groups included, depth first, by name."""
    out = []
    for name in sorted(group.commands):
        command = group.commands[name]
        ctx = click.Context(command, info_name=name, parent=parent, terminal_width=100, max_content_width=100)
        out.append(f"## {prefix} {name}\n\n```\n{command.get_help(ctx)}\n```\n")
        if isinstance(command, click.Group):
            out.extend(_commands(command, ctx, f"{prefix} {name}"))
    return out


def test_cli_reference_is_generated_from_help() -> None:
    os.environ.pop("AFTERACTION_DATABASE_URL", None)
    assert_golden("../../docs/cli.md", cli_reference())


def test_every_setting_is_documented() -> None:
    docs = README + (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for setting in SETTINGS:
        assert setting.env in docs, f"{setting.env} is not documented"
