"""``afteraction import`` of a store's own export, again later: the changes at the source come across,
a destination's later changes stay, ids stay as written (h23)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.testing import make_experience
from tests.test_cli import cli

SCOPE = aa.Scope(tenant="acme", app="ci", project="builds")
TASK = "Package feed returns 401 after the access token expired"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def destination(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "destination.db")
    url: str = request.getfixturevalue("pg_url")
    return url


def export(db: str, path: Path) -> Path:
    code, _, err = cli("export", str(path), "--db", db)
    assert code == 0, err
    return path


def imported(path: Path, db: str) -> dict[str, int]:
    code, out, err = cli("import", str(path), "--db", db, "--json")
    assert code == 0, err
    counts: dict[str, int] = json.loads(out)
    return counts


def injected(db: str) -> bool:
    code, out, _ = cli("block", "package feed 401 token expired", *_scope_options(), "--db", db)
    return code == 0 and out.startswith("=== BEGIN REFERENCE")


def _scope_options() -> list[str]:
    return ["--scope", "tenant=acme", "--scope", "app=ci", "--scope", "project=builds"]


def test_a_lesson_revoked_at_the_source_is_revoked_by_the_next_import(tmp_path: Path, destination: str) -> None:
    source = str(tmp_path / "source.db")
    with aa.Memory.open(source, embedder=None) as mem:
        lesson = make_experience(TASK, scope=SCOPE)
        assert mem.add(lesson)
    assert imported(export(source, tmp_path / "first.jsonl"), destination) == {
        "read": 1,
        "added": 1,
        "updated": 0,
        "existing": 0,
    }
    assert injected(destination)
    with aa.Memory.open(source, embedder=None) as mem:
        mem.record_outcome(lesson.id, scope=SCOPE, success=False, key="run-1")
        mem.set_status(lesson.id, "revoked", scope=SCOPE, reason="the feed moved")
        at_source = mem.get(lesson.id, scope=SCOPE)
    later = export(source, tmp_path / "later.jsonl")
    assert imported(later, destination) == {"read": 1, "added": 0, "updated": 1, "existing": 0}
    with aa.Memory.open(destination, embedder=None) as mem:
        moved = mem.get(lesson.id, scope=SCOPE)
    assert moved.status == aa.Status.REVOKED and moved.confidence == at_source.confidence
    assert replace(moved, revision=at_source.revision) == at_source  # the whole record, its outcome keys too
    assert not injected(destination)
    assert imported(later, destination) == {"read": 1, "added": 0, "updated": 0, "existing": 1}  # again: nothing


def test_a_copy_changed_at_the_destination_after_the_files_is_kept(tmp_path: Path, destination: str) -> None:
    lesson = make_experience(TASK, scope=SCOPE)
    older = replace(lesson, updated_at=lesson.created_at + timedelta(hours=1), revision=7)
    path = tmp_path / "older.jsonl"
    path.write_text(json.dumps(older.to_dict()) + "\n")
    with aa.Memory.open(destination, embedder=None) as mem:
        assert mem.add(replace(lesson, updated_at=lesson.created_at + timedelta(hours=2), confidence=0.9))
    assert imported(path, destination) == {"read": 1, "added": 0, "updated": 0, "existing": 1}
    with aa.Memory.open(destination, embedder=None) as mem:
        assert mem.get(lesson.id, scope=SCOPE).confidence == 0.9


def test_another_scopes_lesson_under_the_id_is_kept(tmp_path: Path, destination: str) -> None:
    lesson = make_experience(TASK, scope=SCOPE, id="lesson-by-hand")
    theirs = replace(lesson, scope=replace(SCOPE, project="deploys"), task="Theirs")
    path = tmp_path / "newer.jsonl"
    path.write_text(json.dumps(replace(lesson, updated_at=lesson.created_at + timedelta(days=1)).to_dict()) + "\n")
    with aa.Memory.open(destination, embedder=None) as mem:
        assert mem.add(theirs)
    assert imported(path, destination) == {"read": 1, "added": 0, "updated": 0, "existing": 1}
    with aa.Memory.open(destination, embedder=None) as mem:
        assert mem.get("lesson-by-hand", scope=theirs.scope).task == "Theirs"


def test_a_line_without_a_time_is_added_but_never_replaces(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    line = {"id": "legacy-1", "task_id": "t-1", "task": TASK, "lesson": "Rotate the token.", "status": "Validated"}
    path = tmp_path / "undated.jsonl"
    path.write_text(json.dumps({**line, "scope": SCOPE.to_dict(), "confidence": 0.8}) + "\n")
    assert imported(path, db)["added"] == 1
    path.write_text(json.dumps({**line, "scope": SCOPE.to_dict(), "confidence": 0.6}) + "\n")
    assert imported(path, db) == {"read": 1, "added": 0, "updated": 0, "existing": 1}  # its time is the reading's
    with aa.Memory.open(db, embedder=None) as mem:
        assert mem.get("legacy-1", scope=SCOPE).confidence == 0.8


def test_an_older_releases_id_is_kept_and_importing_its_export_back_adds_nothing(tmp_path: Path) -> None:
    """Releases before c3a5e9f stored any ``exp_`` id with any task_id; an import re-derived it (h23 #2)."""
    source = str(tmp_path / "old.db")
    old = make_experience(TASK, scope=SCOPE, id="exp_0123456789abcdef01234567")
    with aa.Memory.open(source, embedder=None) as mem:
        assert mem.store.put(old)  # as the older release stored it
    dump = export(source, tmp_path / "old.jsonl")
    assert imported(dump, str(tmp_path / "new.db"))["added"] == 1
    with aa.Memory.open(str(tmp_path / "new.db"), embedder=None) as mem:
        assert [e.id for e in mem.export()] == [old.id]
    assert imported(dump, source) == {"read": 1, "added": 0, "updated": 0, "existing": 1}


def test_a_revocation_at_the_destination_is_not_undone_by_a_later_outcome_at_the_source(
    tmp_path: Path, destination: str
) -> None:
    """h26 #3, part 1: the source's copy, changed last by an outcome, replaced the destination's revoked one."""
    source = str(tmp_path / "source.db")
    with aa.Memory.open(source, embedder=None) as mem:
        lesson = make_experience(TASK, scope=SCOPE)
        assert mem.add(lesson)
    imported(export(source, tmp_path / "first.jsonl"), destination)
    with aa.Memory.open(destination, embedder=None) as mem:
        mem.set_status(lesson.id, "revoked", scope=SCOPE, reason="harmful: double refunds")
    with aa.Memory.open(source, embedder=None) as mem:
        mem.record_outcome(lesson.id, scope=SCOPE, success=True, key="run-9")
    assert imported(export(source, tmp_path / "later.jsonl"), destination)["updated"] == 1  # the outcome comes
    with aa.Memory.open(destination, embedder=None) as mem:
        kept = mem.get(lesson.id, scope=SCOPE)
    assert (kept.status, kept.status_reason, kept.supporting) == (aa.Status.REVOKED, "harmful: double refunds", 2)
    assert not injected(destination)
    assert imported(tmp_path / "later.jsonl", destination)["updated"] == 0


def test_a_revocation_at_the_source_arrives_after_outcomes_at_the_destination(tmp_path: Path, destination: str) -> None:
    """h26 #3, part 2: the destination's copy, changed last, kept the source's revocation out."""
    source = str(tmp_path / "source.db")
    with aa.Memory.open(source, embedder=None) as mem:
        lesson = make_experience(TASK, scope=SCOPE)
        assert mem.add(lesson)
    imported(export(source, tmp_path / "first.jsonl"), destination)
    with aa.Memory.open(source, embedder=None) as mem:
        mem.set_status(lesson.id, "revoked", scope=SCOPE, reason="the feed moved")
    with aa.Memory.open(destination, embedder=None) as mem:
        mem.record_outcome(lesson.id, scope=SCOPE, success=True, key="run-9")
    assert imported(export(source, tmp_path / "later.jsonl"), destination)["updated"] == 1
    with aa.Memory.open(destination, embedder=None) as mem:
        kept = mem.get(lesson.id, scope=SCOPE)
    assert (kept.status, kept.status_reason, kept.supporting) == (aa.Status.REVOKED, "the feed moved", 2)
    assert not injected(destination)
    assert imported(tmp_path / "later.jsonl", destination)["updated"] == 0


def test_a_revocation_at_the_destination_holds_over_a_staleness_at_the_source_changed_later(
    tmp_path: Path, destination: str
) -> None:
    """h30: marked stale at the source, then revoked at the destination, then an outcome at the source: the import
    took the source's stale (its copy changed later), and one good outcome made the harmful lesson Validated again."""
    source = str(tmp_path / "source.db")
    with aa.Memory.open(source, embedder=None) as mem:
        lesson = make_experience(TASK, scope=SCOPE)
        assert mem.add(lesson)
    imported(export(source, tmp_path / "first.jsonl"), destination)
    with aa.Memory.open(source, embedder=None) as mem:
        mem.set_status(lesson.id, "stale", scope=SCOPE, reason="the feed moved")
    with aa.Memory.open(destination, embedder=None) as mem:
        mem.set_status(lesson.id, "revoked", scope=SCOPE, reason="harmful: double refunds")
    with aa.Memory.open(source, embedder=None) as mem:
        mem.record_outcome(lesson.id, scope=SCOPE, success=False, key="run-9")  # a failure: still stale there
    imported(export(source, tmp_path / "later.jsonl"), destination)
    with aa.Memory.open(destination, embedder=None) as mem:
        kept = mem.get(lesson.id, scope=SCOPE)
        assert (kept.status, kept.status_reason, kept.contradicting) == (
            aa.Status.REVOKED,
            "harmful: double refunds",
            1,
        )
        mem.record_outcome(lesson.id, scope=SCOPE, success=True, key="run-10")
        assert mem.get(lesson.id, scope=SCOPE).status is aa.Status.REVOKED
    assert not injected(destination)


def test_a_line_whose_times_are_null_is_undated_too(tmp_path: Path) -> None:
    """h26 #4: ``null`` is absent for every optional field; it read as dated now and replaced the stored copy."""
    db = str(tmp_path / "s.db")
    line = {"id": "legacy-1", "task_id": "t-1", "task": TASK, "lesson": "Rotate the token.", "status": "Validated"}
    path = tmp_path / "undated.jsonl"
    path.write_text(json.dumps({**line, "scope": SCOPE.to_dict(), "confidence": 0.8}) + "\n")
    assert imported(path, db)["added"] == 1
    nulls = {**line, "scope": SCOPE.to_dict(), "confidence": 0.6, "created_at": None, "updated_at": None}
    path.write_text(json.dumps(nulls) + "\n")
    assert imported(path, db) == {"read": 1, "added": 0, "updated": 0, "existing": 1}
