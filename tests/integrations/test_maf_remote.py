"""The MAF integration against a shared service: two agents on two "hosts" (two RemoteMemory
clients of one real `afteraction serve --dev`), the second taught by the first's verified run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("agent_framework")

import afteraction as aa
from tests.integrations.test_maf import FIX, REWORDED, TASK, Setup, blocks
from tests.serving import serving

pytestmark = pytest.mark.maf

DEV = aa.Scope(tenant="dev", app="support", project="refunds", agent="refund-agent")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with serving(tmp_path / "served.db", "--dev") as url:
        yield url


def test_a_run_on_one_host_teaches_an_agent_on_another(server: str) -> None:
    with aa.Memory.open(server) as one, aa.Memory.open(server) as other:
        check_taught(one, other)


def check_taught(one: aa.Memory, other: aa.Memory) -> None:
    first = Setup(FIX, memory=one, identity=aa.fixed_identity(DEV))
    assert first.run(TASK) == "Refund issued."
    assert first.errors == []

    second = Setup(FIX[1:], memory=other, identity=aa.fixed_identity(DEV))
    assert second.run(REWORDED) == "Refund issued."
    for request in second.client.requests:
        [block] = blocks(request)
        assert "LockHeldError" in block and "wait-for-lock" in block
    assert second.errors == []
    lessons = second.lessons(DEV)  # the second run taught too: both are in the service
    assert sorted(lesson.task for lesson in lessons) == sorted([TASK, REWORDED])
    assert all(lesson.status is aa.Status.VALIDATED for lesson in lessons)
