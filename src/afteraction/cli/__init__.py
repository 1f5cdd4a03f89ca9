"""The ``afteraction`` command line. Each command makes one library call and maps errors.

``common`` holds the ``main`` group and what commands share; each other module adds its
commands to ``main`` when imported: ``demo``, ``lessons`` (search, block, outcome, set-status,
forget, forget-user, lessons), ``files`` (import, export, validate), ``admin`` (db, reindex),
``events`` (events prune, events delete) and ``service`` (serve, keys).
"""

from __future__ import annotations

from afteraction.cli import admin, demo, events, files, lessons, service
from afteraction.cli.common import main

__all__ = ["admin", "demo", "events", "files", "lessons", "main", "service"]
