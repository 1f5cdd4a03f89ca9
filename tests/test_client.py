"""The remote client against a real `afteraction serve --dev` process: a RemoteMemory records,
searches, renders blocks, lists lessons and records outcomes as a local Memory does, errors
keep their meaning across the wire, and inside a running agent nothing raises."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.client import RemoteMemory
from afteraction.core.trust import outcome_digest, outcome_key
from afteraction.errors import ConfigError, ForbiddenError, NotFoundError, StoreError, ValidationError
from afteraction.testing import make_experience
from tests.serving import free_port, serving

TASK = "Refund ticket 42 is stuck in pending"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real `afteraction serve --dev` for the module; each test works in its own project."""
    with serving(tmp_path_factory.mktemp("served") / "served.db", "--dev") as url:
        yield url


@pytest.fixture
def scope(request: pytest.FixtureRequest) -> aa.Scope:
    return aa.Scope(tenant="dev", app="support", project=request.node.name[:60])


@pytest.fixture
def mem(server: str) -> Iterator[aa.Memory]:
    found = aa.Memory.open(server)
    assert isinstance(found, RemoteMemory)
    yield found
    found.close()


def record(mem: aa.Memory, scope: aa.Scope, task: str = TASK, *, passed: bool = True) -> aa.Experience | None:
    with mem.run(task, scope=scope, allow_args=("strategy",)) as run:
        run.tool("run_refund_check", args={"strategy": "retry"}, error="LockHeldError: refund lock is held")
        run.next_attempt()
        run.tool("run_refund_check", args={"strategy": "wait-for-lock"}, result="issued")
        run.check("refund-issued", passed=passed)
    return run.experience


def test_a_run_recorded_on_one_host_teaches_another(server: str, mem: aa.Memory, scope: aa.Scope) -> None:
    lesson = record(mem, scope)
    assert lesson is not None and lesson.status is aa.Status.VALIDATED
    with aa.Memory.open(server) as other:  # another host, the same service
        [hit] = other.search("refund stuck in pending", scope=scope)
        assert hit.experience == lesson
        block = other.reference_block("refund stuck in pending", scope=scope)
        assert "wait-for-lock" in block and "LockHeldError" in block
        assert other.reference_block("book a meeting room for Thursday", scope=scope) == ""
        [listed] = other.lessons(scope=scope)
        assert listed.experience == lesson and listed.eligible
        assert other.get(lesson.id, scope=scope) == lesson


def test_a_person_revokes_a_lesson_through_the_service(mem: aa.Memory, scope: aa.Scope) -> None:
    lesson = record(mem, scope)
    assert lesson is not None
    revoked = mem.set_status(lesson.id, "revoked", scope=scope, reason="refunds twice")
    assert (revoked.status, revoked.status_reason) == (aa.Status.REVOKED, "refunds twice")
    assert mem.reference_block("refund stuck in pending", scope=scope) == ""
    with pytest.raises(ValidationError) as info:  # the service names the field
        mem.set_status(lesson.id, "reinforced", scope=scope)
    assert info.value.field == "status"
    with pytest.raises(NotFoundError):
        mem.set_status("exp_nothing", "revoked", scope=scope)
    assert mem.set_status(lesson.id, "validated", scope=scope).status is aa.Status.VALIDATED


def test_a_person_forgets_a_lesson_through_the_service(mem: aa.Memory, scope: aa.Scope) -> None:
    lesson = record(mem, scope)
    assert lesson is not None
    assert mem.forget(lesson.id, scope=scope) is True
    assert mem.reference_block("refund stuck in pending", scope=scope) == ""
    with pytest.raises(NotFoundError):
        mem.get(lesson.id, scope=scope)
    assert mem.forget(lesson.id, scope=scope) is False  # again: no error
    assert mem.forget("", scope=scope) is False
    with pytest.raises(ValidationError) as info:
        mem.forget(lesson.id, scope={"tenant": "acme"})  # type: ignore[arg-type]
    assert info.value.field == "scope"


def test_a_user_is_erased_through_the_service(mem: aa.Memory, scope: aa.Scope) -> None:
    theirs = record(mem, aa.Scope(tenant="dev", app="support", project=scope.project, user="u-erased"))
    kept = record(mem, scope)
    assert theirs is not None and kept is not None
    assert mem.forget_user("u-erased", tenant="dev") == [theirs.id]
    with pytest.raises(NotFoundError):
        mem.get(theirs.id, scope=theirs.scope)
    assert mem.get(kept.id, scope=scope) == kept
    assert asyncio.run(mem.aio.forget_user("u-erased", tenant="dev")) == []  # again: no error
    with pytest.raises(ValidationError) as info:  # named here, before any request
        mem.forget_user("", tenant="dev")
    assert info.value.field == "user"
    with pytest.raises(ForbiddenError):  # the service's tenant is the key's
        mem.forget_user("u-erased", tenant="acme")


def test_outcomes_and_imports_go_through_the_service(mem: aa.Memory, scope: aa.Scope) -> None:
    lesson = record(mem, scope)
    assert lesson is not None
    updated = mem.record_outcome(lesson.id, scope=scope, success=True)
    assert updated.revision == lesson.revision + 1
    assert updated.confidence > lesson.confidence
    keyed = mem.record_outcome(lesson.id, scope=scope, success=True, key="run:r-2", task="customer money gone")
    assert mem.record_outcome(lesson.id, scope=scope, success=True, key="run:r-2") == keyed
    assert keyed.supporting == updated.supporting + 1 and keyed.wordings == ("customer money gone",)
    imported = make_experience("Invoice export times out", scope=scope, id="exp_imported")
    assert mem.add(imported) is True
    assert mem.add(imported) is False  # idempotent by id
    assert mem.get("exp_imported", scope=scope) == imported


def test_a_remote_run_feeds_back_to_the_lessons_it_was_given(mem: aa.Memory, scope: aa.Scope) -> None:
    lesson = record(mem, scope)
    assert lesson is not None
    with mem.run("refund 42 stuck pending, customer money gone", scope=scope, run_id="remote-r-2") as run:
        assert "wait-for-lock" in run.reference_block()
        run.tool("run_refund_check", args={"strategy": "wait-for-lock"}, result="issued")
        run.check("refund-issued", passed=True)
    assert run.given == (lesson.id,)
    now = mem.get(lesson.id, scope=scope)
    assert now.supporting == 2 and now.outcome_keys == (outcome_digest(outcome_key("remote-r-2", scope)),)


def test_the_async_face_works_remotely(mem: aa.Memory, scope: aa.Scope) -> None:
    record(mem, scope)

    async def ask() -> tuple[list[aa.Hit], str]:
        aio = mem.aio
        return await aio.search("refund pending", scope=scope), await aio.reference_block(TASK, scope=scope)

    earlier = set(threading.enumerate())
    hits, block = asyncio.run(ask())
    assert len(hits) == 1 and "wait-for-lock" in block
    ours = [t for t in set(threading.enumerate()) - earlier if t.name.startswith("afteraction-read")]
    assert ours
    mem.close()  # the async face's threads end with the remote memory, as with a local one
    for thread in ours:
        thread.join(1)
        assert not thread.is_alive(), f"{thread.name} outlived close()"


def test_errors_keep_their_meaning_across_the_wire(mem: aa.Memory, scope: aa.Scope) -> None:
    with pytest.raises(ValidationError) as caught:
        mem.search("refund", scope=scope, k=0)
    assert caught.value.field == "k"
    with pytest.raises(NotFoundError):
        mem.get("no-such-lesson", scope=scope)
    with pytest.raises(ForbiddenError, match=r"POST /experience/search: scope\.tenant: "):  # the field kept
        mem.search("refund", scope=aa.Scope(tenant="acme", app="support", project="refunds"))
    with pytest.raises(NotFoundError):  # escaped into one segment: it never reaches another route
        mem.get("a/../../sessions", scope=scope)
    with pytest.raises(NotFoundError):  # as a local memory answers an id no lesson can have
        mem.get("x" * 10_000, scope=scope)


def test_an_unreachable_service_is_a_store_error_and_never_reaches_a_running_agent(scope: aa.Scope) -> None:
    errors: list[tuple[BaseException, str]] = []
    mem = aa.Memory.open(f"http://127.0.0.1:{free_port()}", timeout=2.0, on_error=lambda e, w: errors.append((e, w)))
    with pytest.raises(StoreError, match="cannot reach"):
        mem.search("refund", scope=scope)
    assert record(mem, scope) is None  # the run finished; the failure was reported, not raised
    assert [where for _, where in errors] == ["run.finish"]
    assert isinstance(errors[0][0], StoreError)


def test_the_key_is_sent_and_never_shown(server: str) -> None:
    mem = RemoteMemory(server, api_key="aa_secret_value")
    assert "aa_secret_value" not in repr(mem)
    assert mem._http.headers["authorization"] == "Bearer aa_secret_value"
    mem.close()


@pytest.mark.parametrize("url", ["ftp://host", "http//missing-colon"])
def test_a_bad_url_fails_at_setup(url: str) -> None:
    with pytest.raises(ConfigError):
        RemoteMemory(url)


def test_the_environment_gives_the_url_and_key(server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AFTERACTION_DATABASE_URL", server)
    monkeypatch.setenv("AFTERACTION_API_KEY", "aa_from_env")
    with aa.Memory.open() as mem:
        assert isinstance(mem, RemoteMemory)
        assert mem._http.headers["authorization"] == "Bearer aa_from_env"


def test_another_tenants_scope_is_refused_on_every_read_as_in_a_body(mem: aa.Memory, scope: aa.Scope) -> None:
    record(mem, scope)
    theirs = aa.Scope(tenant="globex", app=scope.app, project=scope.project)
    for call in (
        lambda: mem.lessons(scope=theirs),
        lambda: mem.get("exp_anything", scope=theirs),
        lambda: mem.search("refund", scope=theirs),
    ):
        with pytest.raises(ForbiddenError):
            call()


def test_a_set_up_mistake_is_named_by_a_remote_memory_as_by_a_local_one(server: str, mem: aa.Memory) -> None:
    with pytest.raises(ValidationError) as caught:
        aa.Memory.open(server, allow_args="strategy")
    assert caught.value.field == "allow_args"
    for call, field in (
        (lambda: mem.lessons(scope=None), "scope"),  # type: ignore[arg-type]
        (lambda: mem.add_many([1, 2]), "experiences[0]"),  # type: ignore[list-item]
        (lambda: mem.search("x", scope=aa.Scope(tenant="dev", app="a", project="p"), env=["a"]), "env"),  # type: ignore[arg-type]
        (
            lambda: mem.record_outcome(
                "e", scope=aa.Scope(tenant="dev", app="a", project="p"), success=True, attempts=0
            ),
            "attempts",
        ),
    ):
        with pytest.raises(ValidationError) as caught:
            call()
        assert caught.value.field == field
    with pytest.raises(ConfigError, match="timeout must be a positive number"):
        aa.Memory.open(server, timeout=-1)
    aa.Memory.open(server, embedder=None).close()  # a local memory's options are taken, whatever the URL


def test_an_answer_that_is_not_the_services_is_a_store_error(tmp_path: Path) -> None:
    """A proxy's page, or another program at the URL: a StoreError, not a JSON or a key error."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer(b"<html>login</html>", "text/html")

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self._answer(b"{}", "application/json")

        def _answer(self, body: bytes, media: str) -> None:
            self.send_response(200)
            self.send_header("content-type", media)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    page = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Page)
    threading.Thread(target=page.serve_forever, daemon=True).start()
    try:
        remote = aa.Memory.open(f"http://127.0.0.1:{page.server_address[1]}")
        scope = aa.Scope(tenant="dev", app="a", project="p")
        for call in (lambda: remote.lessons(scope=scope), lambda: remote.search("refund", scope=scope)):
            with pytest.raises(StoreError):
                call()
        remote.close()
    finally:
        page.shutdown()
        page.server_close()


def test_a_501_from_the_service_is_append_only_naming_the_grant() -> None:
    """The service answers 501 when its database role may not delete (tests/server/test_append_only.py): the
    client raises AppendOnlyError (a StoreError not worth retrying) with its message, not a generic StoreError."""
    import httpx

    from afteraction.client_answers import raise_for

    message = "this deployment does not delete lessons: its database role lacks DELETE; GRANT DELETE ON t TO r"
    request = httpx.Request("DELETE", "http://service/experience/lessons/exp_1")
    answer = httpx.Response(501, json={"errors": [{"field": None, "message": message}]}, request=request)
    with pytest.raises(aa.AppendOnlyError, match="DELETE /experience/lessons/exp_1: this deployment does not"):
        raise_for(answer)
