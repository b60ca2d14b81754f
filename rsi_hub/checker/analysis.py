"""Failure analysis (model card §5): per check type, prompts carrying it, prompts failing it,
miss rate, and the `word_eq` near-miss profile.

Counting rules (stated here because the card leaves them implicit):

- A prompt *carries* a type if any of its constraints has that type; it *fails* the type if any
  of its results of that type failed. A prompt with two `word_times` constraints counts once.
- The `word_eq` profile covers the prompts that fail `word_eq`. Each such prompt has one |Δ|:
  the largest |got - expected| over its failing `word_eq` results (a prompt is a near miss only
  if all its misses are near). The buckets `le1`, `le2`, `le3` are **cumulative** (|Δ| <= 1,
  <= 2, <= 3, like the card's "≤1 for 13, ≤2 for 20, ≤3 for 26"); `wild` is |Δ| > 3, so
  `le3 + wild == failing`. Δ is read from `CheckResult.detail["delta"]`, never from the reason
  text; a failing result without a delta counts as wild.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rsi_hub.checker.core import Verdict


@dataclass(frozen=True, slots=True)
class TypeCounts:
    """Prompts carrying a check type and prompts failing it."""

    carrying: int
    failing: int

    @property
    def miss_rate(self) -> float:
        """failing / carrying (0.0 when nothing carries the type)."""
        return self.failing / self.carrying if self.carrying else 0.0


@dataclass(frozen=True, slots=True)
class NearMiss:
    """The `word_eq` near-miss profile; `le1..le3` are cumulative, `wild` is |Δ| > 3."""

    failing: int = 0
    le1: int = 0
    le2: int = 0
    le3: int = 0
    wild: int = 0
    deltas: dict[int, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; `deltas` maps the signed Δ (as a string key) to prompts."""
        return {
            "failing": self.failing,
            "le1": self.le1,
            "le2": self.le2,
            "le3": self.le3,
            "wild": self.wild,
            "cumulative": True,
            "deltas": {str(k): v for k, v in sorted(self.deltas.items())},
        }


@dataclass(frozen=True, slots=True)
class FailureAnalysis:
    """Prompt-level pass count and card §5's per-type table over a set of judged prompts."""

    n: int
    passed: int
    by_type: dict[str, TypeCounts]
    word_eq_delta: NearMiss

    @property
    def pass_rate(self) -> float:
        """passed / n (0.0 for no prompts)."""
        return self.passed / self.n if self.n else 0.0

    def to_json(self) -> dict[str, Any]:
        """`{"n", "passed", "by_type": {type: {"carrying", "failing"}}, "word_eq_delta"}`."""
        return {
            "n": self.n,
            "passed": self.passed,
            "by_type": {
                t: {"carrying": c.carrying, "failing": c.failing}
                for t, c in sorted(self.by_type.items())
            },
            "word_eq_delta": self.word_eq_delta.to_json(),
        }


def failure_analysis(
    rows: Iterable[tuple[Sequence[Mapping[str, Any]], Verdict]],
) -> FailureAnalysis:
    """Analyse (checks, verdict) pairs, one per prompt, as `check(response, checks)` returned.

    Carrying is read from the constraints, failing from the verdict's results (which must be
    one per constraint, in order; a mismatch raises ValueError).
    """
    n = passed = 0
    carrying: Counter[str] = Counter()
    failing: Counter[str] = Counter()
    deltas: Counter[int] = Counter()
    no_delta = 0
    for checks, verdict in rows:
        if len(checks) != len(verdict.results):
            raise ValueError(
                f"prompt {n}: {len(checks)} constraints but {len(verdict.results)} results"
            )
        n += 1
        passed += verdict.passed
        carrying.update({c["type"] for c in checks})
        failed_types = {r.type for r in verdict.results if not r.passed}
        failing.update(failed_types)
        if "word_eq" in failed_types:
            found = [
                r.detail["delta"]
                for r in verdict.results
                if r.type == "word_eq" and not r.passed and r.detail and "delta" in r.detail
            ]
            if found:
                deltas[max(found, key=abs)] += 1
            else:
                no_delta += 1
    total = sum(deltas.values()) + no_delta

    def within(k: int) -> int:
        return sum(v for d, v in deltas.items() if abs(d) <= k)

    near = NearMiss(
        failing=total,
        le1=within(1),
        le2=within(2),
        le3=within(3),
        wild=total - within(3),
        deltas=dict(deltas),
    )
    by_type = {t: TypeCounts(carrying[t], failing[t]) for t in carrying}
    return FailureAnalysis(n, passed, by_type, near)


def format_rate(failing: int, carrying: int) -> str:
    """The card's miss-rate style: two significant digits, `93 %`, `8.6 %`, `0 %`."""
    if not carrying:
        return "-"
    rate = 100.0 * failing / carrying
    if rate == 0:
        return "0 %"
    return f"{rate:.0f} %" if rate >= 9.95 else f"{rate:.1f} %"


def render_failure_table(analysis: FailureAnalysis) -> str:
    """Card §5's table as text: pass rate, one row per type (most failures first), near misses."""
    a = analysis
    lines = [f"prompts: {a.n}, passed: {a.passed} ({100.0 * a.pass_rate:.1f} %)", ""]
    header = ("check (checker type)", "prompts carrying it", "prompts failing it", "miss rate")
    rows = [
        (t, str(c.carrying), str(c.failing), format_rate(c.failing, c.carrying))
        for t, c in sorted(
            a.by_type.items(), key=lambda kv: (-kv[1].failing, -kv[1].carrying, kv[0])
        )
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    lines.append(
        "  ".join(
            h.ljust(w) if i == 0 else h.rjust(w)
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    )
    for r in rows:
        lines.append(
            "  ".join(
                v.ljust(w) if i == 0 else v.rjust(w)
                for i, (v, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    d = a.word_eq_delta
    if "word_eq" in a.by_type:
        lines.append("")
        lines.append(
            f"word_eq near misses (of {d.failing} failing, cumulative): "
            f"|Δ| ≤ 1: {d.le1}, ≤ 2: {d.le2}, ≤ 3: {d.le3}; wild (|Δ| > 3): {d.wild}"
        )
    return "\n".join(lines) + "\n"
