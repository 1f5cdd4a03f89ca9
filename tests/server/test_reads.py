"""Session reads over HTTP: the real OpenAI Agents SDK stream becomes the sessions and the tree
its run.md describes; pages, cursors, ordering by instant, cycle-safe trees, tenant scoping."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.conftest import CONFORMANCE
from tests.server.test_ingest import event

STREAM = CONFORMANCE / "aep-sdk-streams" / "openai-agents" / "events.jsonl"
TRIP, CALC = "ses_20c47e95a7e0", "ses_25f0ef8ab479"
TRIAGE, TRAVEL, CALCULATOR = "ses_81537f6b46b1", "ses_2eedc3a32ff2", "ses_88580a5f8d8e"


def post_stream(client: TestClient) -> list[dict[str, Any]]:
    sent = [json.loads(line) for line in STREAM.read_text(encoding="utf-8").splitlines() if line.strip()]
    for item in sent:  # one event per request, as the SDK's emitter sends them
        answer = client.post("/events", json=item, headers={"user-agent": "python-httpx/0.28.1"})
        assert answer.status_code == 202, answer.text
        assert answer.json() == {"accepted": True, "duplicate": False, "id": item["id"]}
    return sent


def test_the_openai_agents_stream_becomes_its_sessions_and_tree(client: TestClient) -> None:
    sent = post_stream(client)
    assert len(sent) == 22
    sessions = client.get("/sessions").json()
    assert {s["session_id"] for s in sessions["sessions"]} == {TRIP, CALC, TRIAGE, TRAVEL, CALCULATOR}
    assert sessions["next_cursor"] is None
    by_id = {s["session_id"]: s for s in sessions["sessions"]}
    assert by_id[TRIP]["parent_session_id"] is None  # the SDK sends "" for a root
    assert by_id[TRIP]["trace_id"] == "trc_26a4693480a34af6"
    assert by_id[TRIP]["source"] == "agent://trip_planner"
    assert by_id[TRIP]["events"] == 6
    assert sum(s["events"] for s in by_id.values()) == 22

    tree = client.get(f"/sessions/{TRIP}/tree").json()
    assert tree["truncated"] is False
    root = tree["tree"]
    assert root["session_id"] == TRIP
    children = [(c["session_id"], c["source"], c["children"]) for c in root["children"]]
    assert children == [(TRIAGE, "agent://triage", []), (TRAVEL, "agent://travel_assistant", [])]
    calc = client.get(f"/sessions/{CALC}/tree").json()["tree"]
    assert [c["session_id"] for c in calc["children"]] == [CALCULATOR]

    travel = client.get(f"/sessions/{TRAVEL}/events").json()
    types = [e["type"] for e in travel["events"]]
    assert types == ["task.created", "tool.called", "tool.result", "tool.called", "error.raised", "task.completed"]
    assert travel["events"][0] == next(e for e in sent if e["session_id"] == TRAVEL)  # stored as sent


def test_events_are_ordered_by_instant_not_by_text(client: TestClient) -> None:
    # By text, "10:00:00Z" < "10:30:00+01:00" < "11:00:00+02:00"; as instants the order is reversed.
    for id, at in (
        ("a", "2026-01-01T10:00:00Z"),
        ("b", "2026-01-01T10:30:00+01:00"),
        ("c", "2026-01-01T11:00:00+02:00"),
    ):
        assert client.post("/events", json=event(id, time=at)).status_code == 202
    found = client.get("/sessions/ses-1/events").json()
    assert [e["id"] for e in found["events"]] == ["c", "b", "a"]
    assert found["session"]["started_at"] == "2026-01-01T09:00:00.000000Z"


def test_sessions_page_newest_first_with_cursors(client: TestClient) -> None:
    for i in range(7):
        client.post("/events", json=event(f"e{i}", session_id=f"s{i}", time=f"2026-01-0{i + 1}T00:00:00Z"))
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        answer = client.get("/sessions", params={"limit": 3, **({"cursor": cursor} if cursor else {})})
        assert answer.status_code == 200
        seen += [s["session_id"] for s in answer.json()["sessions"]]
        cursor = answer.json()["next_cursor"]
        pages += 1
        if cursor is None:
            break
    assert seen == [f"s{i}" for i in reversed(range(7))]
    assert pages == 3


def test_a_session_events_page_with_a_cursor(client: TestClient) -> None:
    for i in range(5):
        client.post("/events", json=event(f"e{i}", time=f"2026-01-01T00:00:0{i}Z"))
    first = client.get("/sessions/ses-1/events", params={"limit": 2}).json()
    rest = client.get("/sessions/ses-1/events", params={"limit": 10, "cursor": first["next_cursor"]}).json()
    assert [e["id"] for e in first["events"] + rest["events"]] == [f"e{i}" for i in range(5)]
    # A cursor of one list is refused on another.
    other = client.get("/sessions", params={"cursor": first["next_cursor"]})
    assert other.status_code == 400


def test_a_tampered_cursor_is_400(client: TestClient) -> None:
    for i in range(3):
        client.post("/events", json=event(f"e{i}", session_id=f"s{i}"))
    cursor = client.get("/sessions", params={"limit": 1}).json()["next_cursor"]
    flipped = [cursor[:i] + ("A" if cursor[i] != "A" else "B") + cursor[i + 1 :] for i in (0, 30, len(cursor) - 2)]
    for bad in (*flipped, "garbage", "a.b.c", cursor + "x", cursor[:-4], "é" * 600, "A" * 3000, cursor + "="):
        answer = client.get("/sessions", params={"cursor": bad})
        assert answer.status_code == 400, bad
        assert answer.json()["errors"][0]["field"] == "cursor"
    # Another tenant's cursor does not verify either.
    assert client.get("/sessions", params={"cursor": cursor}, headers={"x-test-tenant": "other"}).status_code == 400
    assert client.get("/sessions", params={"cursor": cursor}).status_code == 200


@pytest.mark.parametrize("limit", ["0", "-1", "x", "51", "1e3", "²", "9" * 5000, ""])
def test_a_bad_limit_is_400(client: TestClient, limit: str) -> None:
    answer = client.get("/sessions", params={"limit": limit})
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "limit"


def test_a_self_parent_and_a_two_cycle_tree_answer_promptly(client: TestClient) -> None:
    client.post("/events", json=event("x", session_id="self", parent_session_id="self"))
    client.post("/events", json=event("p", session_id="p", parent_session_id="q"))
    client.post("/events", json=event("q", session_id="q", parent_session_id="p"))
    started = time.monotonic()
    with ThreadPoolExecutor(1) as pool:  # a hang fails the test instead of stalling the suite
        own = pool.submit(client.get, "/sessions/self/tree").result(timeout=10)
        loop = pool.submit(client.get, "/sessions/p/tree").result(timeout=10)
    assert time.monotonic() - started < 2
    assert own.status_code == 200 and own.json()["tree"]["children"] == []
    assert loop.status_code == 200
    (child,) = loop.json()["tree"]["children"]
    assert child["session_id"] == "q" and child["children"] == []


def test_reads_are_scoped_to_the_tenant(client: TestClient) -> None:
    client.post("/events", json=event(), headers={"x-test-tenant": "a"})
    assert client.get("/sessions", headers={"x-test-tenant": "b"}).json()["sessions"] == []
    assert client.get("/sessions/ses-1/tree", headers={"x-test-tenant": "b"}).status_code == 404
    assert client.get("/sessions/ses-1/tree", headers={"x-test-tenant": "a"}).status_code == 200


@pytest.mark.parametrize("path", ["/sessions/%00x/tree", "/sessions/" + "x" * 300 + "/events", "/sessions/a%2Fb/tree"])
def test_odd_session_ids_in_the_path_are_4xx_json(client: TestClient, path: str) -> None:
    answer = client.get(path)
    assert 400 <= answer.status_code < 500
    assert answer.json()["errors"][0]["message"]


def test_ids_holding_a_slash_are_addressable_percent_encoded(client: TestClient) -> None:
    """AEP ids are any strings; one with a slash ("billing/run-42") is named in a path as %2F."""
    sent = event(session_id="billing/run-42", trace_id="otel/abc", type="task.created")
    assert client.post("/events", json=sent).status_code == 202
    for path in ("/sessions/billing%2Frun-42/events", "/sessions/billing%2Frun-42/tree", "/workflows/otel%2Fabc"):
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.text)
        assert "billing/run-42" in answer.text
    assert client.get("/sessions/billing%2Frun-42/export").status_code == 200
    assert client.get("/sessions/billing%2Fother/events").status_code == 404


@pytest.mark.parametrize("session", ["é" * 256, "😀" * 256])
def test_the_pages_of_a_session_with_the_longest_id_follow_their_cursor(client: TestClient, session: str) -> None:
    for n in range(3):
        sent = event(f"{'é' * 255}{n}", session_id=session, time=f"2026-01-01T10:00:0{n}Z")
        assert client.post("/events", json=sent).status_code == 202
    path = f"/sessions/{session}/events"
    seen, cursor = [], None
    for _ in range(3):
        answer = client.get(path, params={"limit": 1, **({"cursor": cursor} if cursor else {})})
        assert answer.status_code == 200, answer.text
        seen += [e["id"][-1] for e in answer.json()["events"]]
        cursor = answer.json()["next_cursor"]
    assert seen == ["0", "1", "2"]


@pytest.mark.parametrize("name", ["id", "session_id", "trace_id", "source"])
def test_an_id_with_a_control_character_is_refused_at_ingest(client: TestClient, name: str) -> None:
    answer = client.post("/events", json=event(**{name: "a\u0000b"}))
    assert answer.status_code == 400
    assert answer.json()["errors"][0] == {"field": name, "message": "must not contain control characters"}


def test_a_session_events_filtered_by_type_and_text(client: TestClient) -> None:
    post_stream(client)
    tools = client.get(f"/sessions/{TRAVEL}/events", params=[("type", "tool.called"), ("type", "error.raised")])
    assert [e["type"] for e in tools.json()["events"]] == ["tool.called", "tool.called", "error.raised"]
    everything = client.get(f"/sessions/{TRAVEL}/events").json()["events"]
    word = "weather"
    expected = [e["id"] for e in everything if word in json.dumps(e["payload"]).lower()]
    assert expected, "the stream's travel session mentions the weather"
    found = client.get(f"/sessions/{TRAVEL}/events", params={"q": word.upper()}).json()
    assert [e["id"] for e in found["events"]] == expected
    both = client.get(f"/sessions/{TRAVEL}/events", params={"q": word, "type": "tool.result"}).json()
    assert [e["id"] for e in both["events"]] == [
        e["id"] for e in everything if e["id"] in expected and e["type"] == "tool.result"
    ]
    assert client.get(f"/sessions/{TRAVEL}/events", params={"q": "no such words anywhere"}).json()["events"] == []


def test_text_filter_pages_with_cursors(client: TestClient) -> None:
    for i in range(6):
        client.post(
            "/events", json=event(f"e{i}", time=f"2026-01-01T00:00:0{i}Z", payload={"n": "hit" if i % 2 else "x"})
        )
    first = client.get("/sessions/ses-1/events", params={"q": "hit", "limit": 2}).json()
    assert [e["id"] for e in first["events"]] == ["e1", "e3"]
    rest = client.get("/sessions/ses-1/events", params={"q": "hit", "cursor": first["next_cursor"]}).json()
    assert [e["id"] for e in rest["events"]] == ["e5"] and rest["next_cursor"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [({"type": "tool.exploded"}, "type"), ({"q": ""}, "q"), ({"q": "x" * 257}, "q"), ({"cursor": "x.y"}, "cursor")],
)
def test_bad_event_filters_are_400_naming_them(client: TestClient, params: dict[str, str], field: str) -> None:
    client.post("/events", json=event())
    answer = client.get("/sessions/ses-1/events", params=params)
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == field


def test_a_workflow_is_its_trace_as_a_tree(client: TestClient) -> None:
    post_stream(client)
    found = client.get("/workflows/trc_26a4693480a34af6")
    assert found.status_code == 200
    body = found.json()
    assert body["truncated"] is False
    shape = [(s["session_id"], [c["session_id"] for c in s["children"]]) for s in body["sessions"]]
    assert shape == [(TRIP, [TRIAGE, TRAVEL])]
    assert client.get("/workflows/no-such-trace").status_code == 404
    assert client.get("/workflows/trc_26a4693480a34af6", headers={"x-test-tenant": "other"}).status_code == 404


def test_a_workflow_with_a_loop_and_a_self_parent_answers_promptly(client: TestClient) -> None:
    client.post("/events", json=event("x", session_id="self", parent_session_id="self", trace_id="loop"))
    client.post("/events", json=event("p", session_id="p", parent_session_id="q", trace_id="loop"))
    client.post("/events", json=event("q", session_id="q", parent_session_id="p", trace_id="loop"))
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(client.get, "/workflows/loop").result(timeout=10)
    assert answer.status_code == 200
    shape = [(s["session_id"], [c["session_id"] for c in s["children"]]) for s in answer.json()["sessions"]]
    assert shape == [("self", []), ("p", ["q"])]  # roots first, then a loop hung from its earliest member


@pytest.mark.parametrize(
    "path",
    [
        "/workflows/%00",
        "/workflows/" + "t" * 10_000,
        "/workflows/..",
        "/workflows/a%2F..%2Fb",
        "/sessions/..%2F..%2Fetc%2Fpasswd/events",
        "/sessions/%E2%80%AE%00/export",
        "/sessions/" + "%FF" * 50 + "/tree",
    ],
)
def test_odd_path_characters_are_4xx_json_and_the_server_keeps_serving(client: TestClient, path: str) -> None:
    answer = client.get(path)
    assert 400 <= answer.status_code < 500, answer.text
    assert answer.json()["errors"][0]["message"]
    assert client.get("/sessions").status_code == 200
