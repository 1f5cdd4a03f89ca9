"""Run every benchmark script in this folder (``bench_*.py``) and print their tables.

    .venv/bin/python benchmarks/run_all.py            # full sizes (what ``make bench`` runs)
    .venv/bin/python benchmarks/run_all.py --smoke    # tiny sizes: checks that each still runs
    .venv/bin/python benchmarks/run_all.py loop       # only bench_loop.py

Each script runs in its own process (so one's memory does not weigh on the next) with this
interpreter; its table goes to stdout, its progress to stderr. The exit status is 1 when any
script failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts(names: Sequence[str] = ()) -> list[Path]:
    """The benchmark scripts, sorted; only those named (``loop`` or ``bench_loop.py``) if any are."""
    found = sorted(HERE.glob("bench_*.py"))
    if not names:
        return found
    wanted = {name.removeprefix("bench_").removesuffix(".py") for name in names}
    return [path for path in found if path.stem.removeprefix("bench_") in wanted]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run every benchmarks/bench_*.py and print their tables.")
    parser.add_argument("names", nargs="*", help="only these benchmarks (e.g. loop)")
    parser.add_argument("--smoke", action="store_true", help="pass --smoke to each: tiny sizes, seconds each")
    args = parser.parse_args(argv)
    chosen = scripts(args.names)
    if not chosen:
        parser.error(f"no benchmark matches {' '.join(args.names)!r} in {HERE}")
    failed = []
    for script in chosen:
        print(f"== {script.name} ==", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(script), *(["--smoke"] if args.smoke else [])], cwd=HERE.parent)
        print(
            f"== {script.name}: {'ok' if code == 0 else f'FAILED (exit {code})'} in "
            f"{time.perf_counter() - started:.1f} s ==\n",
            flush=True,
        )
        if code != 0:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
