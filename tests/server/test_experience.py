"""Experience over HTTP: search, block, lessons, outcomes, submitted runs and session verdicts,
each in the caller's tenant, and bad input named."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import afteraction as aa
from afteraction.core.trust import outcome_digest, outcome_key
from afteraction.memory import Memory
from afteraction.server import create_app
from afteraction.store.sqlite_events import SQLiteEvents
from afteraction.testing import make_experience
from tests.server.conftest import LIMITS, tenant_from_header
from tests.server.keyed import Keyed, bearer, keyed
from tests.server.test_ingest import event

SCOPE = {"app": "support", "project": "refunds"}
ACME = aa.Scope(tenant="acme", **SCOPE)


@pytest.fixture
def http(events: SQLiteEvents) -> Iterator[TestClient]:
    memory = Memory(events.store)
    app = create_app(events, tenant=tenant_from_header, limits=LIMITS, memory=memory)
    with TestClient(app, raise_server_exceptions=False, headers={"x-test-tenant": "acme"}) as found:
        yield found
    memory.close()  # as `serve` does: indexing stops before the store closes


@contextmanager
def keyed_http(path: Path) -> Iterator[tuple[Keyed, TestClient]]:
    """A service with API keys and an experience store, and a client that sends no key of its own."""
    with keyed(path) as server:
        memory = Memory(server.store)
        app = create_app(SQLiteEvents(server.store), auth=server.auth, limits=LIMITS, memory=memory)
        with TestClient(app, raise_server_exceptions=False) as http:
            yield server, http
        memory.close()


RUN = {
    "id": "run-9",
    "task": "Refund ticket 9 is stuck",
    "scope": {"tenant": "acme", "app": "support", "project": "refunds"},
    "started_at": "2026-01-01T10:00:00Z",
    "ended_at": "2026-01-01T10:05:00Z",
    "state": "completed",
    "attempts": [{"index": 0, "calls": [{"tool": "refund", "args": {}, "result": "issued"}]}],
    "evidence": [{"id": "refund-issued", "passed": True}],
}


def lesson(id: str = "exp_refund", task: str = "Refund ticket is stuck in pending", **fields: Any) -> aa.Experience:
    return make_experience(task, scope=fields.pop("scope", ACME), id=id, **fields)


def store(http: TestClient, *lessons: aa.Experience) -> None:
    answer = http.post("/experience/lessons", json={"lessons": [item.to_dict() for item in lessons]})
    assert answer.status_code in (200, 201), answer.text


def test_a_lesson_id_holding_a_slash_is_addressable_percent_encoded(http: TestClient) -> None:
    store(http, lesson(id="legacy/17"))
    assert http.get("/experience/lessons/legacy%2F17", params=SCOPE).json()["id"] == "legacy/17"
    answer = http.post("/experience/lessons/legacy%2F17/outcome", json={"scope": SCOPE, "success": True})
    assert answer.status_code == 200 and answer.json()["supporting"] == 2


def test_search_block_and_lessons_answer_in_the_callers_tenant(http: TestClient) -> None:
    store(http, lesson())
    hits = http.post("/experience/search", json={"query": "refund stuck pending", "scope": SCOPE}).json()["hits"]
    assert [hit["id"] for hit in hits] == ["exp_refund"]
    block = http.post("/experience/block", json={"task": "refund stuck pending", "scope": SCOPE}).json()["block"]
    assert "Refund ticket is stuck in pending" in block
    listed = http.get("/experience/lessons", params=SCOPE).json()["lessons"]
    assert [item["id"] for item in listed] == ["exp_refund"] and listed[0]["eligible"] is True
    assert http.get("/experience/lessons/exp_refund", params=SCOPE).json()["id"] == "exp_refund"
    # another tenant sees nothing of it
    other = {"x-test-tenant": "globex"}
    assert http.post("/experience/search", json={"query": "refund", "scope": SCOPE}, headers=other).json() == {
        "hits": []
    }
    assert http.get("/experience/lessons/exp_refund", params=SCOPE, headers=other).status_code == 404


def test_a_posted_lesson_is_stored_without_the_secrets_it_carries(http: TestClient) -> None:
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    store(http, lesson(lesson=f"Use the deploy user's key {key} to re-run the refund job."))
    stored = http.get("/experience/lessons/exp_refund", params=SCOPE).json()
    assert key not in json.dumps(stored) and "[REDACTED" in json.dumps(stored)


def test_a_scope_naming_another_tenant_is_refused(http: TestClient) -> None:
    answer = http.post("/experience/search", json={"query": "refund", "scope": {**SCOPE, "tenant": "globex"}})
    assert answer.status_code == 403
    assert answer.json()["errors"] == [{"field": "scope.tenant", "message": "this key belongs to another tenant"}]
    foreign = lesson(scope=aa.Scope(tenant="globex", **SCOPE))
    answer = http.post("/experience/lessons", json={"lessons": [foreign.to_dict()]})
    assert answer.status_code == 403
    assert answer.json()["errors"][0]["field"] == "lessons[0].scope.tenant"
    assert http.get("/experience/lessons", params=SCOPE, headers={"x-test-tenant": "globex"}).json() == {"lessons": []}


def test_an_outcome_updates_confidence(http: TestClient) -> None:
    store(http, lesson())
    answer = http.post("/experience/lessons/exp_refund/outcome", json={"scope": SCOPE, "success": False})
    assert answer.status_code == 200
    assert answer.json()["revision"] == 2 and answer.json()["contradicting"] == 1


def test_an_outcome_under_a_key_counts_once_and_a_success_teaches_its_words(http: TestClient) -> None:
    store(http, lesson())
    body = {"scope": SCOPE, "success": True, "key": "run:r-9", "task": "customer money never came back"}
    first = http.post("/experience/lessons/exp_refund/outcome", json=body)
    again = http.post("/experience/lessons/exp_refund/outcome", json={**body, "success": False})
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    assert first.json()["supporting"] == 2 and first.json()["outcome_keys"] == [outcome_digest("run:r-9")]
    assert first.json()["wordings"] == ["customer money never came back"]
    found = http.post("/experience/search", json={"query": "customer money never came back", "scope": SCOPE})
    assert [hit["id"] for hit in found.json()["hits"]] == ["exp_refund"]


def test_a_person_revokes_a_lesson_and_reinstates_it(http: TestClient) -> None:
    store(http, lesson())
    body = {"scope": SCOPE, "status": "revoked", "reason": "issues the refund twice"}
    answer = http.post("/experience/lessons/exp_refund/status", json=body)
    assert answer.status_code == 200, answer.text
    assert (answer.json()["status"], answer.json()["status_reason"], answer.json()["revision"]) == (
        "revoked",
        "issues the refund twice",
        2,
    )
    assert http.post("/experience/block", json={"task": "refund stuck pending", "scope": SCOPE}).json()["block"] == ""
    [listed] = http.get("/experience/lessons", params=SCOPE).json()["lessons"]
    assert listed["eligible"] is False and listed["reason"] == "status is Revoked: issues the refund twice"
    other = http.post("/experience/lessons/exp_refund/status", json=body, headers={"x-test-tenant": "globex"})
    assert other.status_code == 404  # another tenant cannot reach it
    back = http.post("/experience/lessons/exp_refund/status", json={"scope": SCOPE, "status": "validated"})
    assert back.status_code == 200 and back.json()["status"] == "validated"
    assert http.post("/experience/search", json={"query": "refund stuck pending", "scope": SCOPE}).json()["hits"]


def test_a_person_forgets_a_lesson_once_and_another_tenant_cannot(http: TestClient) -> None:
    store(http, lesson(), lesson(id="exp_kept"))
    other = http.delete("/experience/lessons/exp_refund", params=SCOPE, headers={"x-test-tenant": "globex"})
    assert other.status_code == 200 and other.json() == {"deleted": False}
    elsewhere = http.delete("/experience/lessons/exp_refund", params={**SCOPE, "project": "billing"})
    assert elsewhere.json() == {"deleted": False}
    answer = http.delete("/experience/lessons/exp_refund", params=SCOPE)
    assert answer.status_code == 200 and answer.json() == {"deleted": True}
    assert http.get("/experience/lessons/exp_refund", params=SCOPE).status_code == 404
    assert [found["id"] for found in http.get("/experience/lessons", params=SCOPE).json()["lessons"]] == ["exp_kept"]
    assert http.post("/experience/search", json={"query": "refund pending", "scope": SCOPE}).json()["hits"][0][
        "id"
    ] == ("exp_kept")
    assert http.delete("/experience/lessons/exp_refund", params=SCOPE).json() == {"deleted": False}  # a retry
    refused = http.delete("/experience/lessons/exp_kept", params={"app": "support"})
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "project"  # the query parameter
    refused = http.delete("/experience/lessons/exp_kept", params={**SCOPE, "tenant": "globex"})
    assert refused.status_code == 403 and refused.json()["errors"][0]["field"] == "tenant"


def test_with_keys_forgetting_needs_write_and_a_project_key_keeps_to_its_project(tmp_path: Path) -> None:
    with keyed_http(tmp_path / "keyed.db") as (server, http):
        writer = bearer(server.token(scopes="write"))
        http.post("/experience/lessons", json={"lessons": [lesson().to_dict()]}, headers=writer)
        path = "/experience/lessons/exp_refund"
        assert http.delete(path, params=SCOPE, headers=bearer(server.token(scopes="read"))).status_code == 403
        bound = bearer(server.token(scopes="read,write", project="billing"))
        assert http.delete(path, params=SCOPE, headers=bound).status_code == 403
        assert http.delete(path, params=SCOPE).status_code == 401
        assert http.delete(path, params=SCOPE, headers=writer).json() == {"deleted": True}


def test_erasing_a_user_deletes_their_lessons_in_the_callers_tenant_only(http: TestClient) -> None:
    alice = aa.Scope(tenant="acme", **SCOPE, user="alice")
    store(http, lesson(scope=alice), lesson(id="exp_billing", scope=aa.Scope("acme", "billing", "x", user="alice")))
    store(http, lesson(id="exp_shared"), lesson(id="exp_bob", scope=aa.Scope(tenant="acme", **SCOPE, user="bob")))
    other = http.delete("/experience/users/alice/lessons", headers={"x-test-tenant": "globex"})
    assert other.status_code == 200 and other.json() == {"deleted": 0, "ids": []}
    refused = http.delete("/experience/users/alice/lessons", params={"tenant": "globex"})
    assert refused.status_code == 403 and refused.json()["errors"][0]["field"] == "tenant"
    answer = http.delete("/experience/users/alice/lessons", params={"tenant": "acme"})
    assert answer.status_code == 200
    assert answer.json()["deleted"] == 2 and sorted(answer.json()["ids"]) == ["exp_billing", "exp_refund"]
    listed = http.get("/experience/lessons", params={**SCOPE, "user": "alice"}).json()["lessons"]
    assert [found["id"] for found in listed] == ["exp_shared"]
    assert http.delete("/experience/users/alice/lessons").json() == {"deleted": 0, "ids": []}  # a retry
    bad = http.delete("/experience/users/%20alice/lessons")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "user"


def test_with_keys_erasing_a_user_needs_write_and_a_key_not_bound_to_a_project(tmp_path: Path) -> None:
    with keyed_http(tmp_path / "keyed.db") as (server, http):
        writer = bearer(server.token(scopes="write"))
        mine = lesson(scope=aa.Scope(tenant="acme", **SCOPE, user="alice"))
        http.post("/experience/lessons", json={"lessons": [mine.to_dict()]}, headers=writer)
        path = "/experience/users/alice/lessons"
        assert http.delete(path, headers=bearer(server.token(scopes="read"))).status_code == 403
        bound = http.delete(path, headers=bearer(server.token(scopes="read,write", project="refunds")))
        assert bound.status_code == 403 and "every project" in bound.json()["errors"][0]["message"]
        assert http.delete(path).status_code == 401
        assert http.delete(path, headers=writer).json() == {"deleted": 1, "ids": ["exp_refund"]}


def test_a_submitted_run_is_learned_here(http: TestClient) -> None:
    run = {
        "id": "run-1",
        "task": "Nightly build cannot pull from the private package feed",
        "scope": {"tenant": "acme", **SCOPE},
        "started_at": "2026-01-01T10:00:00Z",
        "ended_at": "2026-01-01T10:05:00Z",
        "state": "completed",
        "attempts": [{"index": 0, "calls": [{"tool": "rotate_token", "args": {}, "result": "rotated"}]}],
        "evidence": [{"id": "build-green", "passed": True}],
    }
    answer = http.post("/experience/runs", json={"run": run})
    assert answer.status_code == 201, answer.text
    assert answer.json()["lesson"]["status"] == "validated"
    again = http.post("/experience/runs", json={"run": run})
    assert again.status_code == 200 and again.json() == {**answer.json(), "judged_before": True}
    run_failed = {**run, "id": "run-2", "evidence": [{"id": "build-green", "passed": False}], "state": "failed"}
    assert http.post("/experience/runs", json={"run": run_failed}).status_code == 201
    unjudged = http.post("/experience/runs", json={"run": {**run, "id": "run-3", "evidence": []}})
    assert unjudged.status_code == 200 and unjudged.json() == {"lesson": None}
    hits = http.post("/experience/search", json={"query": "package feed pull fails", "scope": SCOPE}).json()["hits"]
    assert len(hits) == 1  # the failed run's lesson is Quarantined: never found
    run["scope"] = {"tenant": "globex", **SCOPE}
    assert http.post("/experience/runs", json={"run": run}).status_code == 403


def test_a_verdict_on_an_ingested_session_teaches(http: TestClient) -> None:
    events = [
        event("e1", type="task.created", payload={"task": "Refund ticket 42 is stuck in pending"}),
        event("e2", type="tool.called", time="2026-01-01T10:00:01Z", payload={"tool_name": "refund", "call_id": "c1"}),
        event("e3", type="tool.result", time="2026-01-01T10:00:02Z", payload={"call_id": "c1", "output": "issued"}),
        event("e4", type="task.completed", time="2026-01-01T10:00:03Z", payload={}),
    ]
    assert http.post("/events/batch", json=events).status_code == 202
    verdict = {"scope": SCOPE, "evidence": [{"id": "refund-issued", "passed": True}]}
    answer = http.post("/sessions/ses-1/verdict", json=verdict)
    assert answer.status_code == 201, answer.text
    learned = answer.json()["lesson"]
    assert learned["task"] == "Refund ticket 42 is stuck in pending" and learned["status"] == "validated"
    again = http.post("/sessions/ses-1/verdict", json=verdict)  # idempotent
    assert again.status_code == 200 and again.json() == {"lesson": learned, "judged_before": True}
    failed = {"scope": SCOPE, "evidence": [{"id": "refund-issued", "passed": False}]}
    contrary = http.post("/sessions/ses-1/verdict", json=failed)  # h18 #8: was 201, as if it had been used
    assert contrary.status_code == 200 and contrary.json() == {"lesson": learned, "judged_before": True}
    assert len(http.get("/experience/lessons", params=SCOPE).json()["lessons"]) == 1
    assert http.post("/sessions/nope/verdict", json=verdict).status_code == 404
    # another tenant cannot judge this tenant's session
    assert http.post("/sessions/ses-1/verdict", json=verdict, headers={"x-test-tenant": "globex"}).status_code == 404


#: A lesson whose fix is one call of ``refund``: a run that calls it applied the lesson.
REFUND_FIX = aa.Solution(steps=("refund() → issued",))


def test_a_block_names_its_lessons_and_a_run_given_them_reports_back(http: TestClient) -> None:
    store(http, lesson(solution=REFUND_FIX))
    given = http.post("/experience/block", json={"task": "refund stuck in pending", "scope": SCOPE}).json()
    assert "Refund ticket is stuck in pending" in given["block"] and given["lessons"] == ["exp_refund"]
    assert http.post("/experience/block", json={"task": "book a meeting room", "scope": SCOPE}).json() == {
        "block": "",
        "lessons": [],
    }
    run = {
        "id": "run-2",
        "task": "Refund for ticket 97 hangs in pending",
        "scope": {"tenant": "acme", **SCOPE},
        "started_at": "2026-01-01T10:00:00Z",
        "ended_at": "2026-01-01T10:05:00Z",
        "state": "completed",
        "attempts": [{"index": 0, "calls": [{"tool": "refund", "args": {}, "result": "issued"}]}],
        "evidence": [{"id": "refund-issued", "passed": True}],
    }
    for _ in range(2):  # a host resubmitting the same run counts once
        answer = http.post("/experience/runs", json={"run": run, "given": given["lessons"]})
        assert answer.status_code in (200, 201), answer.text
    helped = http.get("/experience/lessons/exp_refund", params=SCOPE).json()
    run_key = outcome_key("run-2", aa.Scope("acme", **SCOPE))
    assert helped["supporting"] == 2 and helped["outcome_keys"] == [outcome_digest(run_key)]
    assert helped["wordings"] == ["Refund for ticket 97 hangs in pending"]


def test_a_session_verdict_reports_to_the_lessons_the_session_was_given(http: TestClient) -> None:
    store(http, lesson(solution=REFUND_FIX))
    events = [
        event("e1", type="task.created", payload={"task": "Refund ticket 42 is stuck in pending"}),
        event("e2", type="tool.called", time="2026-01-01T10:00:01Z", payload={"tool_name": "refund", "call_id": "c1"}),
        event("e3", type="tool.result", time="2026-01-01T10:00:02Z", payload={"call_id": "c1", "output": "held"}),
        event("e4", type="task.failed", time="2026-01-01T10:00:03Z", payload={"error": "refund lock held"}),
    ]
    assert http.post("/events/batch", json=events).status_code == 202
    verdict = {"scope": SCOPE, "evidence": [{"id": "refund-issued", "passed": False}], "given": ["exp_refund"]}
    answer = http.post("/sessions/ses-1/verdict", json=verdict)
    assert answer.status_code == 201 and answer.json()["lesson"]["status"] == "quarantined"
    contradicted = http.get("/experience/lessons/exp_refund", params=SCOPE).json()
    assert (contradicted["supporting"], contradicted["contradicting"], contradicted.get("wordings")) == (1, 1, None)


def test_a_verdict_judged_before_gives_the_lessons_it_names_the_first_verdict_not_its_own(http: TestClient) -> None:
    """h26 #2: a contrary second verdict, answered ``judged_before`` (not used), counted a failure against
    the lesson it named in ``given``."""
    store(http, lesson(solution=REFUND_FIX))
    events = [
        event("e1", type="task.created", payload={"task": "Refund ticket 42 is stuck in pending"}),
        event("e2", type="tool.called", time="2026-01-01T10:00:01Z", payload={"tool_name": "refund", "call_id": "c1"}),
        event("e3", type="tool.result", time="2026-01-01T10:00:02Z", payload={"call_id": "c1", "output": "issued"}),
        event("e4", type="task.completed", time="2026-01-01T10:00:03Z", payload={}),
    ]
    assert http.post("/events/batch", json=events).status_code == 202
    passed = {"scope": SCOPE, "evidence": [{"id": "refund-issued", "passed": True}]}
    assert http.post("/sessions/ses-1/verdict", json=passed).status_code == 201
    contrary = {"scope": SCOPE, "evidence": [{"id": "refund-issued", "passed": False}], "given": ["exp_refund"]}
    for _ in range(2):
        answer = http.post("/sessions/ses-1/verdict", json=contrary)
        assert answer.status_code == 200 and answer.json()["judged_before"] is True
    named = http.get("/experience/lessons/exp_refund", params=SCOPE).json()
    assert (named["supporting"], named["contradicting"]) == (2, 0)  # the run passed, once


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/experience/search", {"scope": SCOPE}, "query"),
        ("/experience/search", {"query": "x"}, "scope"),
        ("/experience/search", {"query": "x", "scope": {"app": "support"}}, "scope.project"),
        ("/experience/search", {"query": "x", "scope": SCOPE, "k": 0}, "k"),
        ("/experience/search", {"query": "x", "scope": SCOPE, "k": "5"}, "k"),
        ("/experience/search", {"query": "x", "scope": SCOPE, "env": {"os": 1}}, "env.os"),
        ("/experience/block", {"task": "x", "scope": SCOPE, "layout": "fancy"}, "layout"),
        ("/experience/lessons", {"lessons": []}, "lessons"),
        ("/experience/lessons", {"lessons": [{"id": "x"}]}, "lessons[0].task_id"),
        ("/experience/lessons/exp/outcome", {"scope": SCOPE, "success": "yes"}, "success"),
        ("/experience/lessons/exp_refund/outcome", {"scope": SCOPE, "success": True, "key": 7}, "key"),
        ("/experience/lessons/exp_refund/outcome", {"scope": SCOPE, "success": True, "task": ["x"]}, "task"),
        ("/experience/lessons/exp_refund/status", {"scope": SCOPE}, "status"),
        ("/experience/lessons/exp_refund/status", {"scope": SCOPE, "status": "reinforced"}, "status"),
        ("/experience/lessons/exp_refund/status", {"scope": SCOPE, "status": "stale", "reason": 7}, "reason"),
        ("/experience/lessons/exp_refund/status", {"scope": SCOPE, "status": "stale", "reason": "x" * 501}, "reason"),
        ("/experience/lessons/exp_refund/status", {"status": "stale"}, "scope"),
        ("/experience/runs", {"run": {"id": "r"}}, "run.task"),
        ("/experience/runs", {"run": RUN, "given": "exp_refund"}, "given"),
        ("/experience/runs", {"run": RUN, "given": ["exp_refund", 7]}, "given[1]"),
        ("/experience/runs", {"run": RUN, "given": ["x"] * 101}, "given"),
        ("/sessions/ses-1/verdict", {"scope": SCOPE, "evidence": []}, "evidence"),
        ("/sessions/ses-1/verdict", {"scope": SCOPE, "evidence": [{"passed": True}]}, "evidence[0].id"),
        *(  # h22 #1: "false" was read as true, [] and 0 as false
            ("/sessions/ses-1/verdict", {"scope": SCOPE, "evidence": [check, {**check, "required": r}]}, field)
            for check in [{"id": "lint", "passed": False}]
            for r, field in [
                ("false", "evidence[1].required"),
                (0, "evidence[1].required"),
                ([], "evidence[1].required"),
            ]
        ),
    ],
)
def test_bad_input_names_the_field(http: TestClient, path: str, body: dict[str, Any], field: str) -> None:
    answer = http.post(path, json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["errors"][0]["field"] == field


def test_bodies_must_be_json_objects(http: TestClient) -> None:
    assert (
        http.post("/experience/search", content=b"query=x", headers={"content-type": "text/plain"}).status_code == 415
    )
    answer = http.post("/experience/search", content=b"[1]", headers={"content-type": "application/json"})
    assert answer.status_code == 400 and answer.json()["errors"][0]["field"] == "body"
    answer = http.post("/experience/search", content=b"{", headers={"content-type": "application/json"})
    assert answer.status_code == 400


def test_without_an_experience_store_the_routes_say_so(events: SQLiteEvents) -> None:
    with TestClient(create_app(events, limits=LIMITS), raise_server_exceptions=False) as plain:
        answer = plain.post("/experience/search", json={"query": "x", "scope": SCOPE})
    assert answer.status_code == 404
    assert "no experience store" in answer.json()["errors"][0]["message"]


def test_with_keys_a_read_key_searches_and_a_project_key_keeps_to_its_project(tmp_path: Path) -> None:
    with keyed_http(tmp_path / "keyed.db") as (server, http):
        writer = bearer(server.token(scopes="write"))
        assert (
            http.post("/experience/lessons", json={"lessons": [lesson().to_dict()]}, headers=writer).status_code == 201
        )
        reader = bearer(server.token(scopes="read"))
        found = http.post("/experience/search", json={"query": "refund pending", "scope": SCOPE}, headers=reader)
        assert found.status_code == 200 and len(found.json()["hits"]) == 1
        assert (
            http.post("/experience/lessons", json={"lessons": [lesson("x").to_dict()]}, headers=reader).status_code
            == 403
        )
        bound = bearer(server.token(scopes="read,write", project="billing"))
        other = http.post("/experience/search", json={"query": "refund", "scope": SCOPE}, headers=bound)
        assert other.status_code == 403
        refused = {"field": "scope.project", "message": "this key is bound to project 'billing'"}
        assert other.json()["errors"] == [refused]
        assert http.get("/experience/lessons", params=SCOPE, headers=bound).status_code == 403
        mine = {"app": "support", "project": "billing"}
        assert http.post("/experience/search", json={"query": "refund", "scope": mine}, headers=bound).json() == {
            "hits": []
        }
        for public in ("/health", "/ready", "/openapi.json"):
            assert http.get(public).status_code == 200, public
        assert http.post("/experience/search", json={"query": "x", "scope": SCOPE}).status_code == 401


def test_posting_lessons_refuses_a_misspelt_field_and_a_repeated_id(http: TestClient) -> None:
    """Found by an operator: ``expire_at`` was dropped silently (201), and the same id twice said
    ``{"stored": 1, "received": 2}`` without naming it."""
    item = lesson().to_dict()
    answer = http.post("/experience/lessons", json={"lessons": [{**item, "expire_at": "2020-01-01T00:00:00Z"}]})
    assert answer.status_code == 400 and "lessons[0].expire_at" in answer.text
    answer = http.post("/experience/lessons", json={"lessons": [item, lesson(id="other").to_dict(), item]})
    assert answer.status_code == 400 and "lessons[2].id" in answer.text and "repeats lessons[0].id" in answer.text
    assert http.get("/experience/lessons", params=SCOPE).json() == {"lessons": []}
