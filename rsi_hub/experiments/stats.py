"""Multiple-comparison correction and interval estimates used by experiment tables and plots.

The paired test itself (exact McNemar) and the paired bootstrap belong to `rsi_hub.evaluate`;
what lives here is what only experiments need: Holm's step-down correction for a family of
candidates tested against one incumbent, and the Wilson interval of a pass rate for the
dose-response plot.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p values, in the order given.

    The smallest p is multiplied by m, the next by m - 1, and so on; each adjusted value is
    raised to at least the one before it (step-down monotonicity) and capped at 1. Rejecting
    where the adjusted p is below alpha controls the family-wise error rate at alpha.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def wilson_interval(passes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a pass rate `passes / n` (a fraction in [0, 1]).

    Chosen over the normal approximation because it stays inside [0, 1] and keeps its coverage
    near 0 and 1 and for small suites.
    """
    if n <= 0:
        raise ValueError("a pass rate needs at least one item")
    if not 0 <= passes <= n:
        raise ValueError(f"passes must lie in [0, {n}], got {passes}")
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = passes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # At 0 or n passes the bound is exactly 0 or 1; rounding would leave 1e-17 instead.
    low = 0.0 if passes == 0 else max(0.0, centre - half)
    high = 1.0 if passes == n else min(1.0, centre + half)
    return low, high
