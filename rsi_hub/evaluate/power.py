"""`rsi-hub power`: what gain the acceptance rule's paired test can detect on a suite of n prompts.

The card sets its noise by hand ("818 items give σ ≈ 1.6 %"). This module computes, for the
project's own test (`stats.gain_is_significant`: exact McNemar, two-sided p < alpha, B-only wins
outnumbering A-only wins), the probability that a candidate with a true paired gain is accepted.

Model of the paired outcomes (the assumption, stated once): prompts are independent; on each one
the candidate B loses a prompt the baseline A passes with probability `q_loss` and wins a prompt
A fails with probability `q_gain`; the true gain is `q_gain - q_loss`. `Discordance` derives the
two from the baseline pass rate p0 and the gain Δ:

- flip rate f (default 0.06): B fails a fraction f of the prompts A passes, `q_loss = f * p0`,
  and wins `q_gain = f * p0 + Δ`. The default is read off the card's own paired results: on
  IF-3k, 1,697 vs 1,720 with p = 0.16 and 1,697 vs 1,710 with p = 0.43 need ≈ 110 A-only wins,
  6.5 % of A's passes; PHR12 on IF-818 (550 vs 562, p = 0.096) needs ≈ 28, 5 %.
- independent: B's outcome is independent of A's given their pass rates p0 and p1 = p0 + Δ
  (`q_loss = p0 (1 - p1)`, `q_gain = (1 - p0) p1`): no benefit from pairing, the most
  discordance two unrelated models show, hence the conservative bound.

Exact power sums over the number of discordant prompts D ~ Binomial(n, q_loss + q_gain) and,
given D = d, over the A-only count ~ Binomial(d, q_loss / (q_loss + q_gain)): the test accepts
when the A-only count is at most the critical value `critical_a_only(d)`, computed with the same
integer tail sums as `stats.mcnemar_exact_p`. The normal approximation (Connor 1987) is shown
beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rsi_hub.evaluate.stats import doubled_tail_p

DEFAULT_FLIP_RATE = 0.06
#: The largest suite the calculator considers (the critical table grows as n squared bits).
MAX_PROMPTS = 20_000
Method = Literal["exact", "normal"]

_tables: dict[float, np.ndarray] = {}


def critical_a_only(n_max: int, alpha: float) -> np.ndarray:
    """`k[d]` for d = 0..n_max: the largest A-only count with which `d` discordant prompts pass
    the acceptance rule's paired test (-1 when none does).

    Built by walking d upward with exact integers: the tail sum T(d, k) = C(d, 0) + ... + C(d, k)
    follows from T(d - 1, k) as 2 T - C(d - 1, k), and k moves by a step or two per d. Each
    candidate is judged by `doubled_tail_p`, the formula of `mcnemar_exact_p`. Cached per alpha.
    """
    table = _tables.get(alpha)
    if table is not None and len(table) > n_max:
        return table[: n_max + 1]
    size = max(n_max, 4096)  # build a little ahead: a search asks for many nearby n
    ks = np.full(size + 1, -1, dtype=np.int64)
    k, tail, coef = -1, 0, 0  # tail = T(d, k), coef = C(d, k)
    for d in range(1, size + 1):
        if k >= 0:  # from row d - 1 to row d
            tail, coef = 2 * tail - coef, coef * d // (d - k)
        while True:  # grow k while k + 1 still rejects
            nxt = 1 if k < 0 else coef * (d - k) // (k + 1)
            if doubled_tail_p(tail + nxt, d) >= alpha:
                break
            k, tail, coef = k + 1, tail + nxt, nxt
        while k >= 0 and doubled_tail_p(tail, d) >= alpha:  # shrink if k no longer rejects
            tail, coef, k = tail - coef, coef * k // (d - k + 1), k - 1
        ks[d] = k
    _tables[alpha] = ks
    return ks[: n_max + 1]


def exact_power(n: int, q_loss: float, q_gain: float, alpha: float = 0.05) -> float:
    """Probability that the paired test accepts B on n prompts (see the module docstring)."""
    from scipy.stats import binom  # lazily: `rsi-hub --help` builds this command's parser

    discordance = q_loss + q_gain
    if discordance <= 0.0:
        return 0.0
    d = np.arange(n + 1)
    k = critical_a_only(n, alpha)
    # binom.cdf(-1, ...) is 0: no split of d discordant prompts is significant.
    accept = binom.cdf(k, d, q_loss / discordance)
    return float(np.clip(np.dot(binom.pmf(d, n, min(discordance, 1.0)), accept), 0.0, 1.0))


def normal_power(n: int, q_loss: float, q_gain: float, alpha: float = 0.05) -> float:
    """Connor's (1987) normal approximation of the same power (one direction of the test)."""
    from scipy.stats import norm

    discordance, gain = q_loss + q_gain, q_gain - q_loss
    spread = math.sqrt(max(discordance - gain * gain, 0.0))
    if spread == 0.0:  # every prompt a B-only win, or no discordance at all
        return 1.0 if gain > 0 else 0.0
    z = norm.ppf(1.0 - alpha / 2.0)
    return float(norm.cdf((gain * math.sqrt(n) - z * math.sqrt(discordance)) / spread))


@dataclass(frozen=True)
class Discordance:
    """How B's wins and losses arise from a baseline pass rate p0 and a gain Δ (fractions).

    `flip_rate`: B fails this fraction of the prompts A passes; None: B independent of A.
    """

    flip_rate: float | None = DEFAULT_FLIP_RATE

    def rates(self, baseline: float, gain: float) -> tuple[float, float]:
        """(q_loss, q_gain): per-prompt probabilities of an A-only and a B-only win."""
        if self.flip_rate is None:
            new = baseline + gain
            return baseline * (1.0 - new), (1.0 - baseline) * new
        loss = self.flip_rate * baseline
        return loss, loss + gain

    def max_gain(self, baseline: float) -> float:
        """The largest gain the model allows: B wins every prompt A fails but the lost ones."""
        if self.flip_rate is None:
            return 1.0 - baseline
        return 1.0 - baseline * (1.0 + self.flip_rate)

    def describe(self, baseline: float) -> str:
        """The assumption in one sentence, for the report."""
        if self.flip_rate is None:
            return "B's outcome independent of A's on each prompt (no pairing benefit)"
        lost = 100.0 * self.flip_rate * baseline
        return (
            f"B fails {100.0 * self.flip_rate:g} % of the prompts A passes "
            f"({lost:.2f} % of all prompts) and wins that plus the gain among A's failures"
        )


def power_at(
    n: int,
    baseline: float,
    gain: float,
    *,
    alpha: float = 0.05,
    model: Discordance = Discordance(),
    method: Method = "exact",
) -> float:
    """Probability that a candidate with true gain `gain` (a fraction) is accepted on n prompts."""
    q_loss, q_gain = model.rates(baseline, gain)
    return (exact_power if method == "exact" else normal_power)(n, q_loss, q_gain, alpha)


def min_detectable_gain(
    n: int,
    baseline: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    model: Discordance = Discordance(),
    method: Method = "exact",
) -> float | None:
    """The smallest gain (a fraction of n) accepted with probability `power`; None when not even
    the largest gain the model allows reaches it.

    Power rises with the gain (raising q_gain turns ties into B-only wins, and every accepted
    table stays accepted with one more B-only win), so a bisection finds the crossing to 1e-9.
    """
    high = model.max_gain(baseline)
    if high <= 0.0 or power_at(n, baseline, high, alpha=alpha, model=model, method=method) < power:
        return None
    low = 0.0
    while high - low > 1e-9:
        mid = (low + high) / 2.0
        reached = power_at(n, baseline, mid, alpha=alpha, model=model, method=method) >= power
        low, high = (low, mid) if reached else (mid, high)
    return high


def required_prompts(
    gain: float,
    baseline: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    model: Discordance = Discordance(),
    method: Method = "exact",
    max_prompts: int = MAX_PROMPTS,
) -> int | None:
    """The smallest n at which a true gain `gain` is accepted with probability `power`; None
    beyond `max_prompts`.

    The exact power of a fixed gain is non-decreasing in n here (D is random, which smooths the
    saw-tooth of a fixed-d exact test; the tests check it n by n), so a bisection finds it.
    """

    def enough(n: int) -> bool:
        return power_at(n, baseline, gain, alpha=alpha, model=model, method=method) >= power

    low, high = 0, 1024  # zero prompts accept nothing; double until enough (tables grow as n^2)
    while not enough(high):
        if high >= max_prompts:
            return None
        low, high = high, min(2 * high, max_prompts)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high
