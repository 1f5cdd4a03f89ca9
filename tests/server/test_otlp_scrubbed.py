"""The OTLP route's answers show no secret: its ``errorMessage`` is scrubbed and cut between words
(``_check.echoed``), and a protobuf client's ``Status`` is scrubbed as the JSON error is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from afteraction.server import Limits, create_app
from afteraction.server import otlp as otlp_route
from afteraction.store.events import EventStore
from tests.model.test_echo_sites import TOKEN, request, span
from tests.server.conftest import tenant_from_header


@pytest.fixture
def otlp(events: EventStore) -> Iterator[TestClient]:
    app = create_app(events, tenant=tenant_from_header, limits=Limits(traces_bytes=256 * 1024, page=50))
    with TestClient(app, raise_server_exceptions=False) as found:
        yield found


def test_the_otlp_error_message_shows_no_part_of_a_token(otlp: TestClient) -> None:
    answer = otlp.post("/v1/traces", json=request(span(startTimeUnixNano=TOKEN)))
    assert answer.status_code == 200
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1" and "startTimeUnixNano must be Unix nanoseconds" in partial["errorMessage"]
    assert TOKEN[:16] not in partial["errorMessage"]


def test_the_otlp_error_message_is_scrubbed_and_cut_between_words() -> None:
    said = otlp_route._message([f"span 1: refused {TOKEN}", "span 2: refused password=hunter2horse"])
    assert said == "span 1: refused [REDACTED:api_key]; span 2: refused password=[REDACTED:secret_assignment]"
    long = otlp_route._message(["y" * 990 + " " + TOKEN, *["more"] * 10_000])
    assert long == "y" * 990 + "…"


def test_a_protobuf_status_is_scrubbed_as_the_json_error_is(otlp: TestClient) -> None:
    short = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # echoed whole: scrubbed by the edge
    headers = {"content-type": "application/x-protobuf", "content-encoding": short}
    answer = otlp.post("/v1/traces", content=b"", headers=headers)
    assert answer.status_code == 415
    assert short.encode() not in answer.content and b"[REDACTED:api_key]" in answer.content
    assert b"content-encoding: must be gzip or none" in answer.content
