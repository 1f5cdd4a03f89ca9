"""Every stored or typed text the command line prints goes through ``shown``: a lesson's status reason
(set by a person, or imported), ids, and values quoted in an error cannot retitle the terminal, write
its clipboard (OSC 52) or fake a line of a listing."""

from __future__ import annotations

import json
from pathlib import Path

import afteraction as aa
from afteraction.cli.common import shown
from afteraction.testing import make_experience
from tests.test_cli import ACME, MINIMAL, cli

SCOPE = aa.Scope(tenant="acme", app="ci", project="builds")
#: OSC 52 (write the clipboard) and OSC 0 (set the title), each ended by BEL; then a C1 CSI and a bare ESC.
CONTROLS = "ok\x1b]52;c;ZWNobyBwd25lZAo=\x07\x1b]0;PWNED\x07 \x9b2J \x1bc"


def unshowable(text: str) -> bool:
    return any((ord(char) < 0x20 and char != "\n") or 0x7F <= ord(char) <= 0x9F for char in text)


def test_shown_writes_every_control_character_as_its_escape() -> None:
    assert shown(CONTROLS) == "ok\\x1b]52;c;ZWNobyBwd25lZAo=\\x07\\x1b]0;PWNED\\x07 \\x9b2J \\x1bc"
    assert shown("a\nb\u202ec\u2066d") == "a\\nb\\u202ec\\u2066d"
    assert shown("Déploiement 証明書 🚀") == "Déploiement 証明書 🚀"


def test_a_status_reason_set_with_controls_is_stored_and_shown_without_them(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    lesson = make_experience("Package feed returns 401", scope=SCOPE)
    with aa.Memory.open(db, embedder=None) as memory:
        memory.add(lesson)
    code, out, _ = cli("set-status", lesson.id, "revoked", "--reason", CONTROLS, *ACME, "--db", db)
    assert code == 0 and not unshowable(out) and "]0;PWNED" in out and "\x1b" not in out  # folded at capture
    code, out, _ = cli("lessons", *ACME, "--db", db)
    assert code == 0 and not unshowable(out)
    assert "(not eligible: status is Revoked: ok ]52;c;" in out


def test_an_imported_status_reason_cannot_fake_a_line_of_the_listing(tmp_path: Path) -> None:
    forged = "old\n2026-01-01 00:00  Validated   0.99  exp_trusted  (eligible)"
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({**MINIMAL, "status": "Stale", "status_reason": forged}) + "\n")
    db = str(tmp_path / "s.db")
    assert cli("import", str(path), "--db", db)[0] == 0
    code, out, _ = cli("lessons", *ACME, "--db", db)
    assert code == 0 and len(out.splitlines()) == 3  # the lesson's line, its task and its lesson
    assert not any(line.startswith("2026-01-01") for line in out.splitlines())
    assert "status is Stale: old 2026-01-01 00:00" in out  # folded at import, as a reason set here is


def test_typed_text_echoed_back_or_quoted_in_an_error_is_shown_escaped(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    with aa.Memory.open(db, embedder=None) as memory:
        memory.add(make_experience("Package feed returns 401", scope=SCOPE))
    code, out, _ = cli("forget", "exp_\x1b]0;PWNED\x07", *ACME, "--db", db)
    assert code == 0 and not unshowable(out) and "exp_\\x1b]0;PWNED\\x07  not found" in out
    code, _, err = cli("lessons", *ACME, "--db", str(tmp_path / "\x1b]0;PWNED\x07.db"))
    assert code == 2 and not unshowable(err) and "\\x1b]0;PWNED\\x07.db" in err
