"""The lesson routes' refusals name the field and the rule: an unknown lesson, a status no person sets,
an import that would leave a lesson no room for updates."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

import afteraction as aa
from tests.server.test_experience import SCOPE, http, lesson, store  # noqa: F401 (http: the fixture)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/experience/lessons/exp_nope", None),
        ("POST", "/experience/lessons/exp_nope/outcome", {"scope": SCOPE, "success": True}),
        ("POST", "/experience/lessons/exp_nope/status", {"scope": SCOPE, "status": "stale"}),
    ],
)
def test_a_lesson_the_scope_does_not_see_is_a_404_naming_lesson_id(
    http: TestClient,  # noqa: F811
    method: str,
    path: str,
    body: dict[str, object] | None,
) -> None:
    answer = http.request(method, path, params=SCOPE if body is None else None, json=body)
    assert answer.status_code == 404
    assert answer.json()["errors"] == [{"field": "lesson_id", "message": "no lesson 'exp_nope' in this scope"}]


@pytest.mark.parametrize("status", [7, "contested", "gone"])
def test_a_status_no_person_sets_is_refused_listing_those_a_person_does(
    http: TestClient,  # noqa: F811
    status: object,
) -> None:
    store(http, lesson())
    answer = http.post("/experience/lessons/exp_refund/status", json={"scope": SCOPE, "status": status})
    assert answer.status_code == 400
    (error,) = answer.json()["errors"]
    assert error["field"] == "status"
    assert error["message"].startswith("must be revoked, superseded, stale or validated (to reinstate); got ")
    assert not any(word in error["message"] for word in ("candidate", "quarantined", "reinforced"))


def test_a_quarantined_lesson_keeps_its_status(http: TestClient) -> None:  # noqa: F811
    store(http, lesson(status=aa.Status.QUARANTINED, supporting=0, contradicting=1, confidence=1 / 3))
    answer = http.post("/experience/lessons/exp_refund/status", json={"scope": SCOPE, "status": "stale"})
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "status" and "forget it" in answer.json()["errors"][0]["message"]


def test_an_import_at_the_largest_revision_is_refused(http: TestClient) -> None:  # noqa: F811
    record = {**lesson().to_dict(), "revision": aa.Experience.MAX_REVISION}
    answer = http.post("/experience/lessons", json={"lessons": [record]})
    assert answer.status_code == 400
    (error,) = answer.json()["errors"]
    assert error["field"] == "lessons[0].revision"
    assert error["message"].startswith(f"must be at most {aa.Experience.MAX_IMPORTED_REVISION} in an import")
