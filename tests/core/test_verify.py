from __future__ import annotations

import pytest

from afteraction.core import verify as v
from afteraction.errors import ValidationError
from afteraction.model import Attempt, Evidence, Run
from tests.builders import call, refund_run


def test_tool_succeeded_last_call_decides() -> None:
    run = refund_run(checks=())
    verdict = v.verify(run, [v.tool_succeeded("run_refund_check")])
    assert verdict is not None and verdict.passed
    assert verdict.checks == ("tool:run_refund_check",)


def test_tool_never_called_fails() -> None:
    verdict = v.verify(refund_run(checks=()), [v.tool_succeeded("send_email")])
    assert verdict is not None and not verdict.passed


def test_failing_required_check_dominates_passes() -> None:
    run = refund_run(checks=(Evidence("a", True), Evidence("b", True), Evidence("c", False)))
    verdict = v.verify(run, [v.tool_succeeded("run_refund_check")])
    assert verdict is not None and not verdict.passed
    assert verdict.failures == ("c",)


def test_check_none_means_no_verdict() -> None:
    assert v.verify(refund_run(), [v.check("ok", lambda run: None)]) is None
    assert v.verify(refund_run(checks=()), []) is None


def test_check_true_false() -> None:
    assert v.verify(refund_run(checks=()), [v.check("ok", lambda run: True)]).passed  # type: ignore[union-attr]
    assert not v.verify(refund_run(checks=()), [v.check("ok", lambda run: False)]).passed  # type: ignore[union-attr]


def test_later_result_of_same_check_supersedes() -> None:
    run = refund_run(checks=(Evidence("refund-issued", False), Evidence("refund-issued", True)))
    verdict = v.verify(run)
    assert verdict is not None and verdict.passed


def test_approval_records_opaque_approver() -> None:
    verdict = v.verify(refund_run(checks=()), [v.approval("reviewed", lambda run: (True, "approver-7f3a"))])
    assert verdict is not None and verdict.passed
    assert verdict.evidence[0].approver == "approver-7f3a"
    assert verdict.evidence[0].method == "approval"
    assert v.verify(refund_run(checks=()), [v.approval("reviewed", lambda run: (None, "x"))]) is None


def test_all_of_and_any_of() -> None:
    yes, no = v.check("yes", lambda r: True), v.check("no", lambda r: False)
    abstain = v.check("abstain", lambda r: None)
    run = refund_run(checks=())
    assert v.verify(run, [v.all_of(yes, yes)]).passed  # type: ignore[union-attr]
    assert not v.verify(run, [v.all_of(yes, no)]).passed  # type: ignore[union-attr]
    assert v.verify(run, [v.all_of(yes, abstain)]) is None
    assert v.verify(run, [v.any_of(no, yes)]).passed  # type: ignore[union-attr]
    assert not v.verify(run, [v.any_of(no, no)]).passed  # type: ignore[union-attr]
    assert v.verify(run, [v.any_of(no, abstain)]) is None
    assert v.verify(run, [v.any_of(abstain, yes)]).passed  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("result", "error", "passed"),
    [
        ({"exit_code": 0, "stdout": "ok"}, None, True),
        ({"returncode": 2}, None, False),
        ('{"exit_code": 1}', None, False),
        ("build finished, exit code 0", None, True),
        (None, "Command failed: exit status 127", False),
    ],
)
def test_exit_code_classifier(result: object, error: str | None, passed: bool) -> None:
    run = refund_run(checks=())
    run = type(run)(**{**{f: getattr(run, f) for f in ("id", "task", "scope", "started_at")},
                       "attempts": (Attempt(0, (call("make", error=error, result=result),)),)})  # fmt: skip
    verdict = v.verify(run, [v.exit_code("make")])
    assert verdict is not None and verdict.passed is passed


@pytest.mark.parametrize(
    ("result", "error", "passed"),
    [
        ({"status_code": 200}, None, True),
        ({"status": 404, "body": "missing"}, None, False),
        ("HTTP 503 Service Unavailable", None, False),
        (None, "HTTP 401 from feed", False),
        ('{"status": "201"}', None, True),
    ],
)
def test_http_status_classifier(result: object, error: str | None, passed: bool) -> None:
    run = refund_run(checks=())
    run = type(run)(**{**{f: getattr(run, f) for f in ("id", "task", "scope", "started_at")},
                       "attempts": (Attempt(0, (call("fetch", error=error, result=result),)),)})  # fmt: skip
    verdict = v.verify(run, [v.http_status("fetch")])
    assert verdict is not None and verdict.passed is passed


def test_classifier_without_a_code_abstains() -> None:
    assert v.verify(refund_run(checks=()), [v.http_status("run_refund_check")]) is None


@pytest.mark.parametrize(
    ("answer", "got"),
    [
        (True, "got bool"),
        ("yes", "got str"),
        ({"refund-issued": True}, "got dict"),
        ([True], "got a list holding bool"),
        ((Evidence("ok", True), "ok"), "got a tuple holding str"),
    ],
)
def test_a_verifier_answering_the_wrong_shape_is_named_with_the_rule(answer: object, got: str) -> None:
    def wrong(run: Run) -> tuple[Evidence, ...] | None:
        return answer  # type: ignore[return-value]

    with pytest.raises(ValidationError) as caught:
        v.verify(refund_run(checks=()), [v.tool_succeeded("run_refund_check"), wrong])
    assert caught.value.field == "verify[1]"
    assert caught.value.rule == f"must return a tuple of Evidence or None, {got}"
    for combine in (v.all_of, v.any_of):
        with pytest.raises(ValidationError) as caught:
            v.verify(refund_run(checks=()), [combine(v.check("yes", lambda r: True), wrong)])
        assert caught.value.field == f"{combine.__name__}[1]"


def test_a_list_of_evidence_is_an_answer() -> None:
    verdict = v.verify(refund_run(checks=()), [lambda run: [Evidence("ok", True)]])  # type: ignore[list-item,return-value]
    assert verdict is not None and verdict.passed and verdict.checks == ("ok",)
