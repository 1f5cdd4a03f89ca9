from __future__ import annotations

import afteraction


def test_all_is_sorted_and_complete() -> None:
    names = afteraction.__all__
    assert list(names) == sorted(names)
    for name in names:
        assert hasattr(afteraction, name), name


def test_errors_share_one_root_and_carry_a_status() -> None:
    errors = [getattr(afteraction, n) for n in afteraction.__all__ if n.endswith("Error")]
    assert errors
    for error in errors:
        assert issubclass(error, afteraction.AfterActionError)
        assert 400 <= error.status < 600
