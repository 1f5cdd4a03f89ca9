"""`afteraction serve` under a bounded, loopback-only load: ingest throughput and tree latency.

It starts ``afteraction serve --dev`` in a subprocess on a free loopback port over a new SQLite
file (``--postgres``: a database in a throwaway PostgreSQL), then measures from this process:

- single: ``--events`` events, one per ``POST /events``, over ``--connections`` keep-alive
  connections, each sending its next request when the previous one is answered (as an AEP
  SDK's emitter does);
- batched: ``--batches`` ``POST /events/batch`` of ``--batch-size`` events each, over 4
  connections;
- tree and workflow: ``GET /sessions/{id}/tree`` and ``GET /workflows/{trace_id}`` p50 / p95
  over one connection, first with a few sessions stored, then with ``--sessions`` stored (a
  workflow of 5 sessions per trace: one root, two children, two grandchildren), to show that
  the latency does not grow with the number of sessions.

The client is a minimal HTTP/1.1 keep-alive client on asyncio (in ``_http.py`` beside this
file): a general client (httpx) costs more CPU per request than the server does, and client
and server share the same 2 cores here, so it would measure itself. Every answer's status is
checked; the run fails on any unexpected one. Besides events/s it reports the CPU time each
event cost the server process (all its threads) and the client: on a machine shared with other
work, events/s follows the share of the cores the benchmark got, the CPU cost much less so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _http import Connection, Server

TARGETS = {"single_per_s": 2_000, "batch_per_s": 20_000, "tree_p50_ms": 5.0}


def event(n: int, *, session: str, trace: str, parent: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "specversion": "0.2.0",
        "id": f"evt-{n}",
        "time": f"2026-01-01T{n // 3_600_000 % 24:02d}:{n // 60_000 % 60:02d}:{n // 1000 % 60:02d}.{n % 1000:03d}Z",
        "source": "agent://bench",
        "type": "tool.called" if n % 3 else "task.created",
        "session_id": session,
        "trace_id": trace,
        "payload": {"tool": "lookup_order", "args": {"order": n, "note": "status pending"}},
    }
    if parent is not None:
        found["parent_session_id"] = parent
    return found


def body(item: Any) -> bytes:
    return json.dumps(item, separators=(",", ":")).encode()


async def single(server: Server, start: int, count: int, connections: int) -> float:
    """Events per second, one event per POST /events."""
    bodies = [body(event(start + i, session=f"single-{i % 500}", trace="single")) for i in range(count)]

    async def worker(share: list[bytes]) -> None:
        async with Connection(server) as http:
            for data in share:
                await http.request("POST", "/events", data, expect=202)

    started = time.perf_counter()
    await asyncio.gather(*(worker(bodies[n::connections]) for n in range(connections)))
    return count / (time.perf_counter() - started)


async def batched(server: Server, start: int, batches: int, size: int, connections: int = 4) -> float:
    """Events per second, ``size`` events per POST /events/batch."""
    payloads = []
    for b in range(batches):
        first = start + b * size
        items = [event(first + i, session=f"batch-{(first + i) // 20}", trace="batch") for i in range(size)]
        payloads.append(body(items))

    async def worker(share: list[bytes]) -> None:
        async with Connection(server) as http:
            for data in share:
                await http.request("POST", "/events/batch", data, expect=202)

    started = time.perf_counter()
    await asyncio.gather(*(worker(payloads[n::connections]) for n in range(connections)))
    return batches * size / (time.perf_counter() - started)


async def store_workflows(server: Server, first: int, last: int) -> None:
    """Workflows ``first`` to ``last - 1``, 5 sessions each (one event per session), 1000 events per batch."""
    items: list[dict[str, Any]] = []
    async with Connection(server) as http:
        for t in range(first, last):
            root, trace = f"wf{t}-root", f"trace-{t}"
            shape = [(root, None), (f"wf{t}-a", root), (f"wf{t}-b", root)]
            shape += [(f"wf{t}-a1", f"wf{t}-a"), (f"wf{t}-b1", f"wf{t}-b")]
            for n, (session, parent) in enumerate(shape):
                items.append(event(20_000_000 + t * 5 + n, session=session, trace=trace, parent=parent))
            if len(items) >= 1000 or t == last - 1:
                await http.request("POST", "/events/batch", body(items), expect=202)
                items = []


async def latency(server: Server, paths: list[str]) -> tuple[float, float]:
    """(p50, p95) in ms of GETs of ``paths`` over one keep-alive connection, after a warm-up."""
    times = []
    async with Connection(server) as http:
        for path in paths[:20]:
            await http.request("GET", path, expect=200)
        for path in paths:
            started = time.perf_counter()
            await http.request("GET", path, expect=200)
            times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.95))]


def reads(server: Server, traces: int, queries: int) -> dict[str, tuple[float, float]]:
    picks = [(i * 7919) % traces for i in range(queries)]
    return {
        "tree": asyncio.run(latency(server, [f"/sessions/wf{t}-root/tree" for t in picks])),
        "workflow": asyncio.run(latency(server, [f"/workflows/trace-{t}" for t in picks])),
    }


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far (Linux), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def costed(server: Server, events: int, run: Any) -> tuple[float, float | None, float]:
    """(events/s, server CPU µs per event, client CPU µs per event) of ``run()``."""
    server_before, client_before = cpu_seconds(server.process.pid), time.process_time()
    rate = float(asyncio.run(run()))
    server_after, client_after = cpu_seconds(server.process.pid), time.process_time()
    server_cpu = (
        None if server_before is None or server_after is None else (server_after - server_before) / events * 1e6
    )
    return rate, server_cpu, (client_after - client_before) / events * 1e6


def median(runs: list[tuple[float, float | None, float]]) -> tuple[float, float | None, float]:
    """The median of each column of the rounds' (events/s, server µs, client µs)."""
    servers = [server for _, server, _ in runs if server is not None]
    return (
        statistics.median(rate for rate, _, _ in runs),
        statistics.median(servers) if servers else None,
        statistics.median(client for _, _, client in runs),
    )


@contextmanager
def database(postgres: bool) -> Iterator[str]:
    """A new SQLite file, or a database in a throwaway PostgreSQL started as the tests start theirs."""
    if not postgres:
        with tempfile.TemporaryDirectory() as tmp:
            yield str(Path(tmp) / "bench.db")
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.pg import Cluster

    cluster = Cluster()
    try:
        yield cluster.database()
    finally:
        cluster.stop()


def measure(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"cores": os.cpu_count(), "load": os.getloadavg()[0]}
    result["backend"] = "PostgreSQL" if args.postgres else "SQLite"
    with database(args.postgres) as db, Server.start(db) as server:
        asyncio.run(single(server, 90_000_000, min(200, args.events), min(4, args.connections)))  # warm-up
        singles, batches = [], []
        for n in range(args.rounds):  # new ids each round: every event is stored, none is a duplicate
            print(f"round {n + 1}: single POST /events ...", file=sys.stderr, flush=True)
            first, start = n * args.events, 10_000_000 + n * 1_000_000_000
            singles.append(
                costed(server, args.events, lambda f=first: single(server, f, args.events, args.connections))
            )
            print(f"round {n + 1}: POST /events/batch ...", file=sys.stderr, flush=True)
            total = args.batches * args.batch_size
            batches.append(costed(server, total, lambda s=start: batched(server, s, args.batches, args.batch_size)))
        result["single_per_s"], result["single_server_us"], result["single_client_us"] = median(singles)
        result["batch_per_s"], result["batch_server_us"], result["batch_client_us"] = median(batches)
        result["rounds"] = args.rounds
        result["batch_rounds"] = [round(rate) for rate, _, _ in batches]
        result["single_rounds"] = [round(rate) for rate, _, _ in singles]
        if not args.reads:
            return result
        small = max(1, min(200, args.sessions // 5))
        asyncio.run(store_workflows(server, 0, small))
        result["small_sessions"] = small * 5
        result["small"] = reads(server, small, args.queries)
        print(f"storing {args.sessions:,} sessions ...", file=sys.stderr, flush=True)
        traces = max(small, args.sessions // 5)
        asyncio.run(store_workflows(server, small, traces))
        result["sessions"] = traces * 5
        result["large"] = reads(server, traces, args.queries)
    return result


def table(r: dict[str, Any]) -> str:
    def mark(name: str, value: float, *, most: bool = False) -> str:
        target = TARGETS.get(name)
        missed = target is not None and (value > target if most else value < target)
        return "!" if missed else ""

    def cpu(server: float | None, client: float) -> str:
        return f"server {'?' if server is None else f'{server:.0f}'} µs, client {client:.0f} µs"

    single, batch = r["single_per_s"], r["batch_per_s"]
    rounds = "" if r["rounds"] == 1 else f"; median of {r['rounds']} rounds"
    lines = [
        f"afteraction serve --dev ({r['backend']}), loopback; {r['cores']} cores, "
        f"load {r['load']:.2f} at start{rounds}",
        "| measurement | value | CPU per event | target |",
        "|---|---|---|---|",
        f"| single POST /events | {single:,.0f} events/s{mark('single_per_s', single)} "
        f"| {cpu(r['single_server_us'], r['single_client_us'])} | ≥ 2,000 events/s |",
        f"| POST /events/batch | {batch:,.0f} events/s{mark('batch_per_s', batch)} "
        f"| {cpu(r['batch_server_us'], r['batch_client_us'])} | ≥ 20,000 events/s |",
    ]
    if r["rounds"] > 1:
        lines.append(f"| rounds, events/s | single {r['single_rounds']}, batch {r['batch_rounds']} | | |")
    if "large" not in r:
        return "\n".join(lines)
    for size, key in ((r["small_sessions"], "small"), (r["sessions"], "large")):
        for route in ("tree", "workflow"):
            p50, p95 = r[key][route]
            target = "≤ 5 ms p50" if route == "tree" and key == "large" else ""
            flag = mark("tree_p50_ms", p50, most=True) if target else ""
            lines.append(
                f"| GET {route} at {size:,} sessions | p50 {p50:.2f} ms{flag}, p95 {p95:.2f} ms | | {target} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="single-event POSTs (default 20000)")
    parser.add_argument("--connections", type=int, default=32, help="keep-alive connections for them (default 32)")
    parser.add_argument("--batches", type=int, default=200, help="batch POSTs (default 200)")
    parser.add_argument("--batch-size", type=int, default=1000, help="events per batch (default 1000)")
    parser.add_argument("--sessions", type=int, default=100_000, help="sessions stored for the reads (default 100000)")
    parser.add_argument("--queries", type=int, default=500, help="reads timed per route and size (default 500)")
    parser.add_argument("--rounds", type=int, default=1, help="ingest rounds; the table shows medians (default 1)")
    parser.add_argument("--no-reads", dest="reads", action="store_false", help="measure the ingest only")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that it still runs")
    parser.add_argument("--postgres", action="store_true", help="serve from a throwaway PostgreSQL, not SQLite")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = parser.parse_args(argv)
    if min(args.events, args.connections, args.batches, args.batch_size, args.sessions, args.queries, args.rounds) <= 0:
        parser.error("every size must be positive")
    if args.smoke:
        args.events, args.connections, args.batches, args.batch_size = 100, 4, 2, 100
        args.sessions, args.queries = 250, 20
    result = measure(args)
    print(json.dumps(result, indent=2) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
