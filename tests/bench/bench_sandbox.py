"""Benchmark: one `code_tests` judgement per sandbox backend against a bare interpreter start,
measured in one run (a script run by hand, not a timed test).

    python tests/bench/bench_sandbox.py [--repeat 10]

For each backend (bwrap, fallback) it judges a correct answer against two cases --repeat times
and prints the median wall time per judgement, and the ratio to the baseline: starting the same
interpreter with `-I -S -c pass` (what any process-per-answer judge pays at least).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import rsi_hub.checker.sandbox as sandbox
from rsi_hub.checker import check
from rsi_hub.checker.sandbox_view import runtime_view

CHECK = {
    "type": "code_tests",
    "entry_point": "add",
    "cases": [{"args": [1, 2], "expect": 3}, {"args": [2, 5], "expect": 7}],
}


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    python = runtime_view().python
    base = median_seconds(
        lambda: subprocess.run([python, "-I", "-S", "-c", "pass"], check=True), args.repeat
    )
    print(f"baseline (interpreter start): {base * 1000:.1f} ms")
    for name in sandbox.BACKENDS:
        sandbox._backend = name

        def judge() -> None:
            assert check("def add(a, b):\n    return a + b\n", [CHECK]).passed

        judge()  # warm the page cache
        t = median_seconds(judge, args.repeat)
        print(f"{name}: {t * 1000:.1f} ms per judgement, {t / base:.1f}x the baseline")


if __name__ == "__main__":
    main()
