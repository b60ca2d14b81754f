"""The generation pool, the holdout guard and the contamination audit, from `rsi_hub.suites`.

This module is the only place synth touches the suites package, so that a change of its API is
a change here alone. Nothing here re-decides what a holdout match is: the suites' `pool_eligible`
(no id ≡ 33 mod 70, no holdout match; card section 2) and `HoldoutIndex` (exact or 8-gram
near-duplicate) decide.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from rsi_hub.errors import RsiHubError
from rsi_hub.synth.prompts import PoolPrompt, as_pool_prompts
from rsi_hub.synth.store import read_jsonl

# Whether synth may generate from a prompt.
Eligible = Callable[[PoolPrompt], bool]
HOLDOUTS: tuple[str, ...] = ("if818", "if263", "if3k")


def load_pool() -> Iterator[PoolPrompt]:
    """The generation pool's eligible prompts in id order, drawn lazily (ids are integers)."""
    from rsi_hub.suites import pool_prompts

    for row in pool_prompts():
        yield PoolPrompt.from_record(row)


def pool_eligible(prompt: PoolPrompt) -> bool:
    """The suites' rule for a pool id: in the pool, not ≡ 33 (mod 70), no holdout match."""
    from rsi_hub.suites import pool_eligible as suites_pool_eligible

    return bool(suites_pool_eligible(prompt.id))


@cache
def holdout_indexes() -> dict[str, Any]:
    """One `HoldoutIndex` per held-out suite (built once per process)."""
    from rsi_hub.suites import HoldoutIndex

    return {name: HoldoutIndex.from_suites([name]) for name in HOLDOUTS}


def not_a_holdout(prompt: PoolPrompt) -> bool:
    """The guard for prompts from a file (another pool): the text matches no held-out prompt."""
    return all(index.match(prompt.prompt) is None for index in holdout_indexes().values())


def load_prompt_file(path: str | Path) -> list[PoolPrompt]:
    """Prompts from a JSONL file of `{"id", "prompt", "checks"}` records (another pool)."""
    path = Path(path)
    if not path.is_file():
        raise RsiHubError(f"{path}: prompt file not found.")
    with path.open(encoding="utf-8") as f:
        return as_pool_prompts(json.loads(line) for line in f if line.strip())


def eligible_prompts(
    prompts: Iterable[PoolPrompt], *, eligible: Eligible, limit: int | None = None
) -> list[PoolPrompt]:
    """The prompts synth may generate from: eligible ones only, the first `limit` of them.

    Stops reading `prompts` at the limit, so `--limit 8` never draws the whole pool.
    """
    out: list[PoolPrompt] = []
    for prompt in prompts:
        if limit is not None and len(out) >= limit:
            break
        if eligible(prompt):
            out.append(prompt)
    return out


def select_prompts(
    prompts_file: str | Path | None,
    limit: int | None,
    eligible: Eligible | None = None,
    *,
    check_types: Collection[str] | None = None,
) -> list[PoolPrompt]:
    """The pool (or a prompt file) restricted to what synth may use, up to `limit` prompts.

    Pool prompts pass `pool_eligible`; file prompts pass `not_a_holdout`; tests may inject.
    With `check_types`, only prompts carrying at least one check of those types are used (the
    card's lensyn targeted the count checks: `word_eq`, `word_times`).
    """
    if prompts_file:
        source: Iterable[PoolPrompt] = load_prompt_file(prompts_file)
        guard = eligible or not_a_holdout
    else:
        source, guard = load_pool(), eligible or pool_eligible
    if check_types:
        wanted = set(check_types)
        source = (p for p in source if any(c.get("type") in wanted for c in p.checks))
    return eligible_prompts(source, eligible=guard, limit=limit)


def audit_data(data_path: Path, *, indexes: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The contamination audit of a data file: zero overlap with every held-out suite.

    Every distinct user prompt of the rows is matched against each holdout's `HoldoutIndex`,
    as the suites' own audit compares suites: `exact` and `near` (near-duplicate) counts per
    holdout, and up to five example matches. `passed` is true only when every count is zero.
    """
    indexes = dict(indexes) if indexes is not None else holdout_indexes()
    prompts: dict[str, str] = {}  # distinct user prompt -> the first prompt id that used it
    rows = 0
    for row in read_jsonl(Path(data_path)):
        rows += 1
        for message in row["messages"]:
            if message["role"] == "user":
                prompts.setdefault(message["content"], str(row.get("prompt_id")))
    per_holdout: dict[str, dict[str, Any]] = {}
    for name, index in indexes.items():
        result: dict[str, Any] = {"compared": len(prompts), "exact": 0, "near": 0, "examples": []}
        for text, prompt_id in prompts.items():
            found = index.matches(text)
            if not found:
                continue
            best = found[0]
            result["exact" if best.exact else "near"] += 1
            if len(result["examples"]) < 5:
                result["examples"].append([prompt_id, best.id, round(best.overlap, 3)])
        per_holdout[name] = result
    return {
        "passed": all(r["exact"] + r["near"] == 0 for r in per_holdout.values()),
        "method": "rsi_hub.suites HoldoutIndex.matches per holdout (exact or 8-gram near-dup)",
        "rows_checked": rows,
        "distinct_prompts": len(prompts),
        "holdouts": per_holdout,
    }
