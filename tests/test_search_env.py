"""A search's environment is cleaned as a recorded run's is (``core.capture.clean_env``), so the
mapping a host gives its run and its later search matches: values as text, cut, scrubbed."""

from __future__ import annotations

import afteraction as aa
from afteraction.testing import FixedClock

SCOPE = aa.Scope(tenant="acme", app="ci", project="builds")
ENV = {"python": 3.11, "gpu": True, "image": "registry.example.com/app:" + "x" * 300}


def test_the_env_given_to_a_run_matches_the_same_env_given_to_a_search() -> None:
    with aa.Memory.open(":memory:", clock=FixedClock(), embedder=None) as mem:
        with mem.run("Nightly build cannot pull from the package feed", scope=SCOPE, env=ENV) as run:
            run.tool("rotate_feed_token", result="rotated")
            run.check("build-green", passed=True)
        [hit] = mem.search("nightly build package feed", scope=SCOPE, env=ENV)
        assert hit.factors["environment"] == 1.0
        [other] = mem.search("nightly build package feed", scope=SCOPE, env={**ENV, "gpu": False})
        assert other.factors["environment"] < 1.0
