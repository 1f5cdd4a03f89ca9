"""The ``afteraction`` command line. Each command makes one library call and maps errors.

``common`` holds the ``main`` group and what commands share; each other module adds its
commands to ``main`` when imported: ``lessons`` (demo, search, block, lessons, import, export,
validate), ``admin`` (db, reindex), ``events`` (events prune, events delete) and ``service``
(serve, keys).
"""

from __future__ import annotations

from afteraction.cli import admin, events, lessons, service
from afteraction.cli.common import main

__all__ = ["admin", "events", "lessons", "main", "service"]
