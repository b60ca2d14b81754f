"""Paired statistics for two models scored on the same items: exact McNemar and a bootstrap CI.

Everything here takes per-item pass/fail vectors aligned on the same items (see `compare`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PairedCounts:
    """The 2x2 table of two pass/fail vectors over the same n items."""

    n: int
    a_pass: int
    b_pass: int
    a_only: int  # items A passes and B fails
    b_only: int  # items B passes and A fails


def paired_counts(a: Sequence[bool], b: Sequence[bool]) -> PairedCounts:
    """Count passes and discordant pairs of two aligned pass/fail vectors."""
    if len(a) != len(b):
        raise ValueError(f"vectors differ in length ({len(a)} vs {len(b)}); align them first")
    a_only = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    b_only = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    return PairedCounts(len(a), sum(map(bool, a)), sum(map(bool, b)), a_only, b_only)


def mcnemar_exact_p(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the two discordant counts.

    Under the null each discordant item is equally likely to favour A or B, so the smaller count
    is Binomial(a_only + b_only, 1/2); the p-value doubles its lower tail (capped at 1), which is
    the "exact" two-sided binomial test for p = 1/2 (a symmetric null, so doubling is exact).
    Computed with integer binomial coefficients: no floating-point tail approximation.
    """
    if a_only < 0 or b_only < 0:
        raise ValueError("discordant counts must be non-negative")
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    return doubled_tail_p(sum(math.comb(n, i) for i in range(k + 1)), n)


def doubled_tail_p(tail: int, n: int) -> float:
    """The two-sided p-value `min(1, 2 * tail / 2**n)` of a lower tail of Binomial(n, 1/2).

    `tail` is the integer sum of binomial coefficients C(n, 0) + ... + C(n, k). Exact rational
    until the one rounding of the final division (Python divides big integers correctly
    rounded). `mcnemar_exact_p` and the power calculator's critical values both use it, so the
    two cannot disagree on a borderline table.
    """
    return min(1.0, (2 * tail) / (1 << n))


def gain_is_significant(a_only: int, b_only: int, alpha: float) -> bool:
    """The paired half of the acceptance rule: B-only wins outnumber A-only wins and the exact
    McNemar p-value is below `alpha` (two-sided)."""
    return b_only > a_only and mcnemar_exact_p(a_only, b_only) < alpha


def paired_bootstrap_ci(
    a: Sequence[bool],
    b: Sequence[bool],
    *,
    iters: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the accuracy difference B - A, in percentage points.

    Items are resampled in pairs (both models' outcomes on an item stay together). Because the
    difference of means only depends on how many resampled items are B-only and A-only wins, a
    resample of n items is drawn as one multinomial over the three kinds of item (A only,
    B only, tie): the same distribution as resampling indices, at a cost independent of n.
    Same seed, same interval.
    """
    counts = paired_counts(a, b)
    if counts.n == 0:
        raise ValueError("no items to bootstrap")
    n = counts.n
    probs = [counts.b_only / n, counts.a_only / n, (n - counts.a_only - counts.b_only) / n]
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, probs, size=iters)
    diffs = (draws[:, 0] - draws[:, 1]) * (100.0 / n)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(diffs, [tail, 1.0 - tail])
    return float(low), float(high)
