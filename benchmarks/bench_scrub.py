"""The secret scrub's cost by input size: ``scrub_text`` on the shapes that were quadratic (h25) and on ordinary text.

For each shape it prints the time to scrub a text of 16 KiB, 64 KiB, 256 KiB and 1 MiB (the documented event limit),
the median of ``--repeat`` runs. A size whose first run takes longer than ``--cap`` seconds is run once, and the larger
sizes of that shape are skipped (``-``): the old, quadratic scrub would take hours at 1 MiB.

Run it against another checkout with ``PYTHONPATH=OTHER/src python benchmarks/bench_scrub.py``; ``--smoke`` runs the
16 KiB column once, to check the script still works.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from afteraction.core.redact import scrub_text

KIB = 1024


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


_LOG = (
    "2024-05-01T12:00:03.117Z INFO  api.request method=GET path=/v1/items?limit=20&page=3 status=200 took=12ms "
    'user=bob@example.com request_id=7f3a9c2e-41b0-4d55-9e1a-0c6d2b8e5f10 ua="python-httpx/0.27"\n'
)
_TRACE = """Traceback (most recent call last):
  File "/srv/app/handlers/orders.py", line 88, in create_order
    order = service.place(cart, customer_id=customer.id, retries=3)
  File "/srv/app/services/orders.py", line 214, in place
    raise PaymentError(f"card declined for order {order_id}: insufficient funds")
app.errors.PaymentError: card declined for order 418273: insufficient funds
"""
_CALL = (
    json.dumps(
        {
            "type": "tool.called",
            "tool": "bash",
            "args": {"command": "curl -s -H 'Accept: application/json' https://api.example.com/items?page=2 | jq ."},
            "result": {"exit_code": 0, "stdout": '[{"id": 1, "name": "widget", "price": 9.99}]', "stderr": ""},
        }
    )
    + "\n"
)

SHAPES: dict[str, Callable[[int], str]] = {
    # h25's quadratic shapes
    "sk- repeated": lambda n: _repeat("sk-", n),
    "mask- repeated": lambda n: _repeat("mask-", n),
    "curl -u repeated": lambda n: _repeat("curl -u ", n),
    "curl repeated (one line)": lambda n: _repeat("curl ", n),
    "pw=x& query string": lambda n: "pw=x&" * (n // 5 - 1) + "pw=x",
    "a=b&token=x& query": lambda n: "a=b&token=x&" * (n // 12),
    "http://u:p@ repeated": lambda n: _repeat("http://u:p@", n),
    '}"kty": repeated': lambda n: _repeat('}"kty":', n),
    "x kty: RSA } repeated": lambda n: _repeat("x kty: RSA }", n),
    # ordinary text
    "log lines": lambda n: _repeat(_LOG, n),
    "stack traces": lambda n: _repeat(_TRACE, n),
    "tool call JSON": lambda n: _repeat(_CALL, n),
}


def _time(text: str, repeat: int, cap: float) -> tuple[float, bool]:
    """The median time to scrub ``text``, and whether it passed ``cap`` (then it ran once)."""
    times: list[float] = []
    for _ in range(repeat):
        started = time.process_time()
        scrub_text(text)
        times.append(time.process_time() - started)
        if times[0] > cap:
            return times[0], True
    return statistics.median(times), False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per size; the median is shown (default 5)")
    parser.add_argument("--cap", type=float, default=5.0, help="seconds past which larger sizes are skipped")
    parser.add_argument("--smoke", action="store_true", help="16 KiB once: checks that it still runs")
    parser.add_argument("shapes", nargs="*", help="only these shapes (default: all)")
    args = parser.parse_args()
    sizes = (16,) if args.smoke else (16, 64, 256, 1024)
    repeat = 1 if args.smoke else args.repeat
    print(f"| shape | {' | '.join(f'{k} KiB' for k in sizes)} |")
    print(f"|---|{'---:|' * len(sizes)}")
    for name, make in SHAPES.items():
        if args.shapes and name not in args.shapes:
            continue
        cells: list[str] = []
        over = False
        for k in sizes:
            if over:
                cells.append("-")
                continue
            seconds, over = _time(make(k * KIB), repeat, args.cap)
            cells.append(f"{seconds:.3f} s")
        print(f"| {name} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
