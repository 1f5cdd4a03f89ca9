"""The OTLP ingest benchmark: how fast ``POST /v1/traces`` turns GenAI spans into stored events.

Each request holds ``--traces`` agent runs shaped as the GenAI conventions record them (one
``invoke_agent`` span, three ``chat`` spans, two ``execute_tool`` spans, one of which fails; content
captured), protobuf-encoded, every trace with fresh ids so nothing dedups. It measures:

- map: decoding the protobuf body and mapping its spans to events, in process (no HTTP, no store);
- HTTP: a real ``afteraction serve --dev`` on loopback (uvicorn, SQLite in a temp dir), one client over
  keep-alive posting the requests one after another: spans/s, events/s and the p50 request time;
- HTTP, split: the same runs, each request sent as two exports, the children first (they wait in the
  span buffer) and then the agent spans (which place them), as a batching exporter sends a long run.

``--baseline DIR`` also runs the HTTP rows against the server of another checkout (its ``.venv``), in
the same passes, alternating with this one, so before/after share the machine's load.

Client and server share the machine. Each measurement runs ``--repeat`` passes; the table quotes the
median pass. ``--smoke`` runs tiny sizes to check the script still works.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from afteraction.core.otlp_events import map_spans
from afteraction.core.otlp_spans import decode_traces

SPANS_PER_TRACE = 6


def _attrs(**values: str) -> list[KeyValue]:
    out = []
    for key, value in values.items():
        item = KeyValue(key=key.replace("__", "."))
        item.value.string_value = value
        out.append(item)
    return out


def request(seed: int, traces: int, part: str = "whole") -> bytes:
    """One export of ``traces`` agent runs; ids derived from ``seed`` so every request is new. ``part``:
    ``whole``, or only the ``children`` (tool and model spans) or the ``roots`` (agent spans)."""
    message = ExportTraceServiceRequest()
    scope = message.resource_spans.add().scope_spans.add()
    base = 1_795_964_213_000_000_000
    user = json.dumps([{"role": "user", "parts": [{"type": "text", "content": f"Plan trip {seed}"}]}])
    for t in range(traces):
        trace_id = (seed * 1_000_003 + t + 1).to_bytes(16, "big")
        agent_id = (2 * t + 1).to_bytes(8, "big")
        spans = [Span(trace_id=trace_id, span_id=agent_id, name="invoke_agent planner", start_time_unix_nano=base,
                      end_time_unix_nano=base + 10_000_000,
                      attributes=_attrs(gen_ai__operation__name="invoke_agent", gen_ai__agent__name="planner",
                                        gen_ai__input__messages=user))]  # fmt: skip
        for n in range(5):
            is_tool = n in (1, 3)
            kind = "execute_tool" if is_tool else "chat"
            attrs = (
                _attrs(gen_ai__operation__name=kind, gen_ai__tool__name=f"tool{n}", gen_ai__tool__call__id=f"c{n}",
                       gen_ai__tool__call__arguments=json.dumps({"city": "Lisbon", "n": n}),
                       gen_ai__tool__call__result="Sunny, 21C")
                if is_tool
                else _attrs(gen_ai__operation__name=kind, gen_ai__request__model="m", gen_ai__input__messages=user)
            )  # fmt: skip
            span = Span(trace_id=trace_id, span_id=(1_000 + 10 * t + n).to_bytes(8, "big"), parent_span_id=agent_id,
                        name=kind, start_time_unix_nano=base + (n + 1) * 1_000_000,
                        end_time_unix_nano=base + (n + 1) * 1_000_000 + 500_000, attributes=attrs)  # fmt: skip
            if n == 3:
                span.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message="RuntimeError('no rooms')"))
            spans.append(span)
        if part != "whole":
            spans = spans[1:] if part == "children" else spans[:1]
        scope.spans.extend(spans)
    return message.SerializeToString()


def bench_map(bodies: list[bytes]) -> tuple[float, int]:
    """Decode and map every body as the server does, without HTTP or a store: seconds, events."""
    started, events = time.perf_counter(), 0
    for body in bodies:
        data = MessageToDict(ExportTraceServiceRequest.FromString(body))
        events += len(map_spans(decode_traces(data).spans).events)
    return time.perf_counter() - started, events


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def bench_http(bodies: list[bytes], workdir: Path, python: str = sys.executable) -> tuple[float, list[float]]:
    port = _free_port()
    db = workdir / f"otlp-{port}.db"
    server = subprocess.Popen(
        [
            python,
            "-c",
            "from afteraction.cli import main; main()",
            "serve",
            "--dev",
            "--db",
            str(db),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            for _ in range(600):
                try:
                    client.get("/sessions")
                    break
                except httpx.TransportError:
                    if server.poll() is not None:
                        raise RuntimeError(f"the server exited with {server.returncode}") from None
                    time.sleep(0.05)
            times = []
            started = time.perf_counter()
            for body in bodies:
                sent = time.perf_counter()
                answer = client.post("/v1/traces", content=body, headers={"content-type": "application/x-protobuf"})
                answer.raise_for_status()
                times.append(time.perf_counter() - sent)
            return time.perf_counter() - started, times
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--traces", type=int, default=50, help="agent runs per request (6 spans each)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--baseline", type=Path, help="another checkout whose server to measure alongside")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.traces, args.repeat = 3, 4, 1
    spans = args.requests * args.traces * SPANS_PER_TRACE
    servers = {"": sys.executable}
    if args.baseline is not None:
        servers["baseline "] = str(args.baseline / ".venv" / "bin" / "python")
    maps: list[float] = []
    https: dict[str, list[float]] = {}
    p50s: dict[str, list[float]] = {}
    events = 0
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            seeds = [r * 100_000 + i for i in range(args.requests)]
            bodies = [request(seed, args.traces) for seed in seeds]
            split = [request(seed + 50_000, args.traces, part) for seed in seeds for part in ("children", "roots")]
            elapsed, events = bench_map(bodies)
            maps.append(elapsed)
            for label, python in servers.items():
                for name, sent in (("POST /v1/traces", bodies), ("  split in two", split)):
                    elapsed, times = bench_http(sent, Path(tmp), python)
                    https.setdefault(label + name, []).append(elapsed)
                    p50s.setdefault(label + name, []).append(statistics.median(times))
    load = os.getloadavg()[0]
    rows = [("map (in process)", spans / statistics.median(maps), events / statistics.median(maps), None)]
    for name, times in https.items():
        rows.append(
            (name, spans / statistics.median(times), events / statistics.median(times), statistics.median(p50s[name]))
        )
    if args.json:
        keys = ("what", "spans_per_s", "events_per_s", "p50_s")
        table = [dict(zip(keys, row, strict=True)) for row in rows]
        print(json.dumps({"requests": args.requests, "traces": args.traces, "load1": load, "rows": table}))
        return 0
    print(f"requests={args.requests} traces/request={args.traces} spans/request={args.traces * SPANS_PER_TRACE} "
          f"events/request={events // args.requests} repeat={args.repeat} load1={load:.1f}")  # fmt: skip
    print(f"{'what':<32} | {'spans/s':>9} | {'events/s':>9} | {'p50 ms/request':>14}")
    for name, span_rate, event_rate, p50 in rows:
        p50_text = "" if p50 is None else f"{p50 * 1000:.1f}"
        print(f"{name:<32} | {span_rate:>9.0f} | {event_rate:>9.0f} | {p50_text:>14}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
