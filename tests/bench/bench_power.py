"""Benchmark of `rsi-hub power` (a script run by hand, never collected by pytest).

    python tests/bench/bench_power.py [--n 3000] [--repeat 3]

1. The exact minimum detectable gain on `--n` prompts (baseline 0.566, the defaults), cold (the
   critical table built) and warm, against the normal approximation's, measured in the same
   run. Target: cold well under 1 s at n = 3000.
2. The critical table: the incremental exact walk against the obvious construction (for each
   d, scan A-only counts upward with `stats.gain_is_significant`) on 300 discordant prompts.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rsi_hub.evaluate import power
from rsi_hub.evaluate.stats import gain_is_significant


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _naive_table(n: int, alpha: float) -> list[int]:
    table = []
    for d in range(n + 1):
        k = -1
        while k + 1 < d and gain_is_significant(k + 1, d - k - 1, alpha):
            k += 1
        table.append(k)
    return table


def main() -> None:
    """Print the figures and ratios described in the module docstring."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    power.exact_power(10, 0.1, 0.2)  # import scipy.stats outside the timings

    def cold() -> None:
        power._tables.clear()
        power.min_detectable_gain(args.n, 0.566)

    t_cold = _best(cold, args.repeat)
    t_warm = _best(lambda: power.min_detectable_gain(args.n, 0.566), args.repeat)
    t_normal = _best(lambda: power.min_detectable_gain(args.n, 0.566, method="normal"), args.repeat)
    print(f"min detectable gain, n = {args.n}: exact cold {1e3 * t_cold:.1f} ms, "
          f"warm {1e3 * t_warm:.1f} ms; normal approximation {1e3 * t_normal:.2f} ms; "
          f"ratio exact warm / normal {t_warm / t_normal:.1f}")  # fmt: skip

    def walk() -> None:
        power._tables.clear()
        power.critical_a_only(300, 0.05)

    t_walk = _best(walk, args.repeat)
    t_naive = _best(lambda: _naive_table(300, 0.05), args.repeat)
    assert _naive_table(300, 0.05) == list(power.critical_a_only(300, 0.05))
    print(f"critical table: walk to 4,096 {1e3 * t_walk:.1f} ms; naive scan to 300 "
          f"{1e3 * t_naive:.1f} ms; ratio naive(300) / walk(4,096) {t_naive / t_walk:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
