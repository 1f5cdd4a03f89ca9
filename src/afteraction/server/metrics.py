"""``GET /metrics``: the caller's tenant's numbers, as JSON or as Prometheus text.

Two kinds of number, told apart in both forms:

- what this replica counted since it started (Prometheus counters): events ingested (new),
  duplicates, and events rejected by validation;
- what the database holds for the tenant, shared by every replica (gauges): events stored,
  by type, sessions, and runs ended (``task.completed``, ``task.failed``).

Only the caller's tenant is ever counted or shown. Prometheus text is answered when the
``Accept`` header asks for ``text/plain`` (or OpenMetrics) before JSON, or with
``?format=prometheus``; JSON otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from afteraction.model._check import echoed
from afteraction.server.common import Problem, Service, json
from afteraction.store.events import Stats

__all__ = ["Counters", "Metrics", "routes"]

PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"


@dataclass(slots=True)
class Counters:
    ingested: int = 0
    duplicates: int = 0
    rejected: int = 0


@dataclass(slots=True)
class Metrics:
    """This replica's counters per tenant. Updated only on the event loop's thread."""

    tenants: dict[str, Counters] = field(default_factory=dict)

    def _of(self, tenant: str) -> Counters:
        found = self.tenants.get(tenant)
        if found is None:
            found = self.tenants[tenant] = Counters()
        return found

    def ingested(self, tenant: str, new: int, duplicates: int) -> None:
        counters = self._of(tenant)
        counters.ingested += new
        counters.duplicates += duplicates

    def rejected(self, tenant: str, count: int) -> None:
        if count:
            self._of(tenant).rejected += count

    def of(self, tenant: str) -> Counters:
        return self.tenants.get(tenant, Counters())


def as_dict(counters: Counters, stats: Stats) -> dict[str, object]:
    return {
        "replica": {
            "events_ingested": counters.ingested,
            "duplicates": counters.duplicates,
            "rejected": counters.rejected,
        },
        "stored": {
            "events": stats.events,
            "sessions": stats.sessions,
            "runs_completed": stats.by_type.get("task.completed", 0),
            "runs_failed": stats.by_type.get("task.failed", 0),
            "events_by_type": dict(sorted(stats.by_type.items())),
        },
    }


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus(tenant: str, counters: Counters, stats: Stats) -> str:
    """The text exposition format (version 0.0.4)."""
    t = f'tenant="{_label(tenant)}"'
    lines: list[str] = []

    def metric(name: str, kind: str, help: str, samples: list[tuple[str, int]]) -> None:
        lines.extend((f"# HELP afteraction_{name} {help}", f"# TYPE afteraction_{name} {kind}"))
        lines.extend(f"afteraction_{name}{{{labels}}} {value}" for labels, value in samples)

    metric("events_ingested_total", "counter", "New events stored by this replica.", [(t, counters.ingested)])
    metric("events_duplicate_total", "counter", "Events whose id was already stored.", [(t, counters.duplicates)])
    metric("events_rejected_total", "counter", "Events refused by validation.", [(t, counters.rejected)])
    by_type = [(f'{t},type="{_label(kind)}"', n) for kind, n in sorted(stats.by_type.items())]
    metric("events_stored", "gauge", "Events stored, by type.", by_type or [(t, 0)])
    metric("sessions_stored", "gauge", "Sessions stored.", [(t, stats.sessions)])
    runs = [(f'{t},outcome="{o}"', stats.by_type.get(f"task.{o}", 0)) for o in ("completed", "failed")]
    metric("runs_ended", "gauge", "Runs that ended, by outcome.", runs)
    return "\n".join(lines) + "\n"


_KNOWN_MEDIA = {"application/json": False, "*/*": False, "text/plain": True, "application/openmetrics-text": True}


def wants_prometheus(request: Request) -> bool:
    """Prometheus text when ``?format=prometheus``, or when ``Accept`` prefers (by its q-values, then its order)
    text/plain or OpenMetrics to JSON; JSON otherwise."""
    chosen = request.query_params.get("format")
    if chosen is not None:
        if chosen not in ("json", "prometheus"):
            raise Problem(400, "format", f"must be json or prometheus, got {echoed(chosen, 32)!r}")
        return chosen == "prometheus"
    best: tuple[float, int, bool] | None = None  # (q, earlier first, prometheus) of the preferred known type
    for n, part in enumerate(request.headers.get("accept", "").split(",")):
        media, *params = (piece.strip().lower() for piece in part.split(";"))
        if media not in _KNOWN_MEDIA:
            continue
        weights = [p[2:] for p in params if p.startswith("q=")]
        try:
            q = float(weights[0]) if weights else 1.0
        except ValueError:
            continue
        found = (q, -n, _KNOWN_MEDIA[media])
        if q > 0 and (best is None or found[:2] > best[:2]):
            best = found
    return best is not None and best[2]


async def metrics(service: Service, request: Request) -> Response:
    tenant = service.tenant(request)
    prom = wants_prometheus(request)
    stats = await run_in_threadpool(service.events.stats, tenant)
    counters = service.metrics.of(tenant)
    if prom:
        return PlainTextResponse(prometheus(tenant, counters, stats), media_type=PROMETHEUS)
    found: JSONResponse = json({"tenant": tenant, **as_dict(counters, stats)})
    return found


def routes(service: Service) -> list[Route]:
    async def endpoint(request: Request) -> Response:
        return await metrics(service, request)

    return [Route("/metrics", endpoint, methods=["GET"])]
