"""Suite statistics (`rsi-hub suites stats`) and the cross-suite overlap audit (`suites audit`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from rsi_hub.suites.files import load_suite
from rsi_hub.suites.holdout import NEAR_DUP_THRESHOLD, HoldoutIndex, Match
from rsi_hub.suites.mixes import TYPE_ORDER
from rsi_hub.suites.pool import POOL_SIZE, is_reserved, pool_prompt

HOLDOUTS: tuple[str, ...] = ("if818", "if263", "if3k")


def suite_stats(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Prompt and check counts: per check type, the prompts carrying it and its total checks."""
    prompts = 0
    carrying: Counter[str] = Counter()
    total: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    for row in rows:
        prompts += 1
        categories[row["category"]] += 1
        types = [c["type"] for c in row["checks"]]
        total.update(types)
        carrying.update(set(types))
    order = {t: i for i, t in enumerate(TYPE_ORDER)}
    names = sorted(carrying, key=lambda t: (order.get(t, len(order)), t))
    return {
        "prompts": prompts,
        "checks": sum(total.values()),
        "types": {t: {"prompts": carrying[t], "checks": total[t]} for t in names},
        "categories": dict(sorted(categories.items())),
    }


def format_stats(name: str, stats: Mapping[str, Any]) -> str:
    """The stats as a plain-text table."""
    lines = [
        f"{name}: {stats['prompts']} prompts, {stats['checks']} checks, "
        f"{len(stats['categories'])} categories",
        "",
        f"{'check type':<16}{'prompts carrying it':>21}{'checks':>8}",
    ]
    for t, counts in stats["types"].items():
        lines.append(f"{t:<16}{counts['prompts']:>21}{counts['checks']:>8}")
    lines += ["", "categories: " + ", ".join(f"{k} {v}" for k, v in stats["categories"].items())]
    return "\n".join(lines)


@dataclass
class PairOverlap:
    """Overlaps between two suites: exact normalised matches and near-duplicates."""

    a: str
    b: str
    compared: int
    exact: int = 0
    near: int = 0
    examples: list[tuple[str, str, float]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.exact + self.near


@dataclass
class AuditReport:
    """The audit over every pair of pool, IF-818, IF263 and IF-3k."""

    pairs: list[PairOverlap]
    pool_ids: int
    pool_audited: int
    threshold: float = NEAR_DUP_THRESHOLD

    @property
    def clean(self) -> bool:
        return all(p.total == 0 for p in self.pairs)

    def format(self) -> str:
        lines = [
            f"near-duplicate: word 8-gram overlap >= {self.threshold} of the smaller prompt; "
            "exact: equal normalised text",
            f"pool: {self.pool_audited} eligible-candidate prompts audited of {self.pool_ids} ids "
            f"(ids ≡ 33 mod 70 are IF263's slice and are skipped)",
            "",
            f"{'pair':<18}{'compared':>10}{'exact':>8}{'near-dup':>10}",
        ]
        for p in self.pairs:
            lines.append(f"{p.a + ' / ' + p.b:<18}{p.compared:>10}{p.exact:>8}{p.near:>10}")
            for left, right, overlap in p.examples:
                lines.append(f"    {left} ~ {right} (overlap {overlap:.2f})")
        lines += ["", "audit: clean" if self.clean else "audit: OVERLAPS FOUND"]
        return "\n".join(lines)


def _compare(a: str, items: Iterable[tuple[str, str]], b: str, index: HoldoutIndex) -> PairOverlap:
    result = PairOverlap(a, b, 0)
    for item_id, prompt in items:
        result.compared += 1
        _count(result, item_id, index.matches(prompt))
    return result


def _count(result: PairOverlap, item_id: str, found: list[Match]) -> None:
    if not found:
        return
    best = found[0]
    if best.exact:
        result.exact += 1
    else:
        result.near += 1
    if len(result.examples) < 5:
        result.examples.append((item_id, best.id, best.overlap))


def audit(pool_size: int = POOL_SIZE, progress: bool = False) -> AuditReport:
    """Compare every pair of pool, IF-818, IF263 and IF-3k for exact and near-duplicate prompts.

    The pool side is every non-reserved id below `pool_size` (reserved ids ≡ 33 mod 70 are
    IF263's own prompts), queried once against an index of all three held-out suites; each
    match is counted for the suite it belongs to. Clean means zero overlaps in every pair.
    """
    suites = {name: load_suite(name).rows for name in HOLDOUTS}
    pairs = []
    for i, a in enumerate(HOLDOUTS):
        for b in HOLDOUTS[i + 1 :]:
            index = HoldoutIndex((r["id"], r["prompt"]) for r in suites[b])
            pairs.append(_compare(a, ((r["id"], r["prompt"]) for r in suites[a]), b, index))
    combined = HoldoutIndex((r["id"], r["prompt"]) for name in HOLDOUTS for r in suites[name])
    pool_pairs = {b: PairOverlap("pool", b, 0) for b in HOLDOUTS}
    ids = [i for i in range(min(pool_size, POOL_SIZE)) if not is_reserved(i)]
    for pool_id in tqdm(ids, desc="auditing pool", disable=not progress):
        found = combined.matches(pool_prompt(pool_id)["prompt"])
        for b, result in pool_pairs.items():
            result.compared += 1
            _count(result, str(pool_id), [m for m in found if m.id.startswith(b + "-")])
    return AuditReport([*pairs, *pool_pairs.values()], POOL_SIZE, len(ids))
