"""Exports over HTTP: a session or a time range as JSON, NDJSON and CSV, streamed, in order of
instant; bad parameters are 400 naming them."""

from __future__ import annotations

import csv
import io
import json

import pytest
from starlette.testclient import TestClient

from afteraction.server import export
from tests.server.test_ingest import event


def post_some(client: TestClient) -> None:
    # Sent out of order, one with an offset: the export follows the instants.
    for id, at, session in (
        ("b", "2026-01-01T10:00:02Z", "s1"),
        ("a", "2026-01-01T12:00:01+02:00", "s1"),  # 10:00:01Z
        ("c", "2026-01-01T10:00:03Z", "s2"),
        ("d", "2026-01-02T00:00:00Z", "s1"),
    ):
        assert (
            client.post(
                "/events", json=event(id, time=at, session_id=session, payload={"note": f'n,{id}\n"q"'})
            ).status_code
            == 202
        )


def test_a_session_exports_as_json_ndjson_and_csv(client: TestClient) -> None:
    post_some(client)
    as_json = client.get("/sessions/s1/export")
    assert as_json.status_code == 200
    assert as_json.headers["content-type"].startswith("application/json")
    assert "attachment" in as_json.headers["content-disposition"]
    events = as_json.json()
    assert [e["id"] for e in events] == ["a", "b", "d"]
    assert events[0]["time"] == "2026-01-01T12:00:01+02:00"  # as sent
    lines = client.get("/sessions/s1/export", params={"format": "ndjson"}).text.splitlines()
    assert [json.loads(line) for line in lines] == events
    answer = client.get("/sessions/s1/export", params={"format": "csv"})
    assert answer.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [r["id"] for r in rows] == ["a", "b", "d"]
    assert tuple(rows[0]) == export.CSV_COLUMNS
    assert rows[0]["instant"] == "2026-01-01T10:00:01.000000Z"
    assert json.loads(rows[0]["payload"]) == {"note": 'n,a\n"q"'}  # commas, quotes and newlines survive


def test_a_time_range_exports_the_tenants_events_in_it(client: TestClient) -> None:
    post_some(client)
    client.post("/events", json=event("other-tenant", time="2026-01-01T10:00:02Z"), headers={"x-test-tenant": "x"})
    found = client.get("/export", params={"from": "2026-01-01T10:00:02Z", "to": "2026-01-01T11:00:03+01:00"}).json()
    assert [e["id"] for e in found] == ["b"]  # from is inclusive, to (10:00:03Z) exclusive
    found = client.get("/export", params={"from": "2026-01-01T10:00:02Z", "to": "2026-01-01T11:00:03.5+01:00"}).json()
    assert [e["id"] for e in found] == ["b", "c"]
    found = client.get("/export", params={"from": "2026-01-01T10:00:02Z", "to": "2026-01-03T00:00:00Z"}).json()
    assert [e["id"] for e in found] == ["b", "c", "d"]
    assert [e["id"] for e in client.get("/export").json()] == ["a", "b", "c", "d"]
    assert client.get("/export", params={"type": "task.failed"}).json() == []
    assert client.get("/export", headers={"x-test-tenant": "nobody"}).json() == []


def test_an_export_larger_than_a_page_streams_whole(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export, "PAGE", 7)
    batch = [event(f"e{i:03d}", time=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z") for i in range(50)]
    assert client.post("/events/batch", json=batch).status_code == 202
    for format in ("json", "ndjson", "csv"):
        with client.stream("GET", "/sessions/ses-1/export", params={"format": format}) as answer:
            text = "".join(answer.iter_text())
        if format == "json":
            ids = [e["id"] for e in json.loads(text)]
        elif format == "ndjson":
            ids = [json.loads(line)["id"] for line in text.splitlines()]
        else:
            ids = [row["id"] for row in csv.DictReader(io.StringIO(text))]
        assert ids == [f"e{i:03d}" for i in range(50)], format


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"format": "xml"}, "format"),
        ({"from": "2026-01-01T10:00:00"}, "from"),  # no offset
        ({"to": "yesterday"}, "to"),
        ({"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "to"),
        ({"type": "nope"}, "type"),
    ],
)
def test_bad_export_parameters_are_400_naming_them(client: TestClient, params: dict[str, str], field: str) -> None:
    answer = client.get("/export", params=params)
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == field


def test_an_unknown_session_export_is_404(client: TestClient) -> None:
    answer = client.get("/sessions/nope/export")
    assert answer.status_code == 404
    assert answer.json()["errors"][0]["message"]


@pytest.mark.parametrize(
    ("cell", "shown"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a=1", "a=1"),
        ("", ""),
        ('{"a":"=1"}', '{"a":"=1"}'),
    ],
)
def test_a_csv_cell_that_a_spreadsheet_would_run_gets_a_quote_in_front(cell: str, shown: str) -> None:
    assert export.neutralize(cell) == shown


def test_a_csv_export_neutralizes_formulas_and_json_and_ndjson_keep_them(client: TestClient) -> None:
    sent = event("=1+2", session_id="@s", payload={"cell": "=cmd|' /C calc'!A0"})
    sent["type"] = "task.updated"
    assert client.post("/events", json=sent).status_code == 202, client.post("/events", json=sent).text
    (row,) = csv.DictReader(io.StringIO(client.get("/export", params={"format": "csv"}).text))
    assert (row["id"], row["session_id"]) == ("'=1+2", "'@s")
    assert json.loads(row["payload"]) == {"cell": "=cmd|' /C calc'!A0"}  # inside JSON text, never a formula
    (as_json,) = client.get("/export").json()
    assert (as_json["id"], as_json["session_id"]) == ("=1+2", "@s")
    (line,) = client.get("/export", params={"format": "ndjson"}).text.splitlines()
    assert json.loads(line) == as_json
