"""The one textual form of an instant reads back as the same instant for every year the model
accepts (1 to 9999): ``%Y`` wrote the year 999 as ``999``, not RFC 3339, so a lesson or an event
of such a time was stored in a form ``parse_time`` then refused (the record unreadable)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from afteraction.core.otlp_events import time_text
from afteraction.model import Experience
from afteraction.model._check import format_time, parse_time
from afteraction.store import SQLiteStore
from tests.conformance.builders import experience

INSTANTS = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(timezone.utc))


@given(INSTANTS)
def test_every_instant_reads_back_as_itself(instant: datetime) -> None:
    text = format_time(instant)
    assert text[4] == "-" and parse_time(text, "t") == instant


def test_a_year_before_1000_is_written_with_four_digits() -> None:
    assert format_time(datetime(999, 6, 1, tzinfo=timezone.utc)) == "0999-06-01T00:00:00.000000Z"
    assert format_time(datetime(1, 1, 1, tzinfo=timezone.utc)) == "0001-01-01T00:00:00.000000Z"
    before_1000 = int(
        (datetime(999, 6, 1, tzinfo=timezone.utc) - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds()
    )
    assert time_text(before_1000 * 1_000_000_000 + 5) == "0999-06-01T00:00:00.000000005Z"


def test_a_lesson_of_the_year_999_is_stored_and_read_back(tmp_path: Path) -> None:
    old = datetime(999, 6, 1, tzinfo=timezone.utc)
    lesson = replace(experience("ancient"), created_at=old, updated_at=old + timedelta(days=1))
    assert Experience.from_dict(lesson.to_dict()) == lesson
    store = SQLiteStore(tmp_path / "memory.db")
    store.put(lesson)
    assert store.get(lesson.scope, "ancient") == lesson
    store.close()
