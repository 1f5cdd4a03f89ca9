from __future__ import annotations

import pytest

import afteraction as aa


def test_development_identity_refuses_production() -> None:
    with pytest.raises(aa.ConfigError, match="production"):
        aa.development_identity(environ={"AFTERACTION_ENV": "production"})
    with pytest.raises(aa.ConfigError):
        aa.development_identity(environ={"ENVIRONMENT": "Prod"})
    scope = aa.development_identity(environ={"AFTERACTION_ENV": "development"})()
    assert scope.tenant == "dev"


def test_fixed_identity_needs_a_scope() -> None:
    scope = aa.Scope(tenant="acme", app="a", project="p")
    assert aa.fixed_identity(scope)() is scope
    with pytest.raises(aa.ConfigError):
        aa.fixed_identity({"tenant": "acme"})  # type: ignore[arg-type]
