"""Page cursors are opaque: encrypted and authenticated, bound to their list and tenant. An event
page's position holds a row id shared by every tenant, so a readable body would let a tenant count
the events other tenants store between two of its pages."""

from __future__ import annotations

import base64
import json
import re

import pytest

from afteraction.errors import ValidationError
from afteraction.server.cursor import MAX_CURSOR, Cursors
from tests.server.keyed import Keyed, bearer, keyed
from tests.server.test_ingest import event

POSITION = [1780000000000000, 123457]


def _json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def decoded_parts(cursor: str) -> list[bytes]:
    """Every base64url run of the cursor, decoded (the old format was ``body.tag``)."""
    return [base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)) for part in re.findall("[A-Za-z0-9_-]+", cursor)]


def test_a_cursor_body_reveals_nothing_of_its_position() -> None:
    cursor = Cursors(b"k" * 32).encode("events:ses-1", "acme", POSITION)
    for part in decoded_parts(cursor):
        assert b"123457" not in part and b"1780000000000000" not in part
    assert str(POSITION[1]) not in cursor


def test_the_same_position_gives_a_new_cursor_each_time_and_both_decode() -> None:
    cursors = Cursors(b"k" * 32)
    one, two = (cursors.encode("events:ses-1", "acme", POSITION) for _ in range(2))
    assert one != two
    assert cursors.decode("events:ses-1", "acme", one) == cursors.decode("events:ses-1", "acme", two) == POSITION
    assert len(one) <= 80  # an event page's cursor stays short


def test_a_cursor_decodes_only_for_its_list_tenant_and_key() -> None:
    cursors = Cursors(b"k" * 32)
    cursor = cursors.encode("events:ses-1", "acme", POSITION)
    for kind, tenant, by in (
        ("events:ses-2", "acme", cursors),
        ("events:ses-1", "globex", cursors),
        ("sessions", "acme", cursors),
        ("events:ses-1", "acme", Cursors(b"j" * 32)),
        ("events:ses-", "1acme", cursors),  # the list and tenant are framed, not joined
    ):
        with pytest.raises(ValidationError) as refused:
            by.decode(kind, tenant, cursor)
        assert refused.value.field == "cursor"


def test_every_changed_byte_is_refused() -> None:
    cursors = Cursors(b"k" * 32)
    raw = bytearray(decoded_parts(cursors.encode("sessions", "acme", [1, "s" * 40]))[0])
    for index in range(len(raw)):
        changed = bytearray(raw)
        changed[index] ^= 1
        text = base64.urlsafe_b64encode(bytes(changed)).rstrip(b"=").decode()
        with pytest.raises(ValidationError):
            cursors.decode("sessions", "acme", text)
    for bad in ("", "A", "A" * 43, "a.b", "é", "A" * (MAX_CURSOR + 1)):
        with pytest.raises(ValidationError):
            cursors.decode("sessions", "acme", bad)


def test_the_longest_session_id_fits_in_a_cursor() -> None:
    cursors = Cursors()
    position = [1780000000000000, "\U0001f600" * 128 + '"' * 128]  # 256 characters, the id's limit
    cursor = cursors.encode("sessions", "acme", position)
    assert len(cursor) <= MAX_CURSOR and cursors.decode("sessions", "acme", cursor) == position


def test_an_event_page_cursor_does_not_count_other_tenants_events(database: str) -> None:
    """The tester's case: two pages of one tenant's session, another tenant's ingest in between."""
    with keyed(database) as server:
        acme, globex = bearer(server.token("acme")), bearer(server.token("globex"))
        cursors = []
        for i in range(2):
            server.client.post("/events", json=event(f"a{i}", time=f"2026-01-01T00:00:0{i}Z"), headers=acme)
            for j in range(5):
                server.client.post("/events", json=event(f"g{i}{j}", session_id="noise"), headers=globex)
            page = server.client.get("/sessions/ses-1/events", params={"limit": i + 1}, headers=acme).json()
            cursors.append(page["next_cursor"])
        for cursor in cursors:  # no part reads as the JSON position (a random part starts with "[" 1 time in 256)
            assert not any(_json(part) for part in decoded_parts(cursor)), cursor
        _check_pages(server, acme, cursors[1])


def _check_pages(server: Keyed, acme: dict[str, str], cursor: str) -> None:
    first = server.client.get("/sessions/ses-1/events", params={"limit": 1}, headers=acme).json()
    rest = server.client.get("/sessions/ses-1/events", params={"cursor": first["next_cursor"]}, headers=acme)
    assert [e["id"] for e in rest.json()["events"]] == ["a1"]
    assert server.client.get("/sessions/ses-1/events", params={"cursor": cursor}, headers=acme).status_code == 200
