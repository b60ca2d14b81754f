"""The generation pool and the contamination audit, as provided by `rsi_hub.suites`.

This module is the only place synth touches the suites package, so that a change of its API is
a change here alone. Eligibility (card section 2): no holdout id, no id ≡ 33 (mod 70).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rsi_hub.errors import RsiHubError
from rsi_hub.synth.prompts import PoolPrompt, as_pool_prompts
from rsi_hub.synth.store import read_jsonl

Eligible = Callable[[Any], bool]


def _suites() -> Any:
    try:
        import rsi_hub.suites as suites
    except ImportError as err:
        raise RsiHubError(
            "rsi_hub.suites is not installed in this checkout: the generation pool, its "
            "eligibility rule and the holdout audit come from it."
        ) from err
    return suites


def pool_eligible(prompt_id: Any) -> bool:
    """Whether a pool id may be generated from (the suites package's rule, never a copy)."""
    return bool(_suites().pool_eligible(prompt_id))


def load_pool() -> list[PoolPrompt]:
    """Every prompt of the generation pool, in pool order."""
    return as_pool_prompts(_suites().pool_prompts())


def load_prompt_file(path: str | Path) -> list[PoolPrompt]:
    """Prompts from a JSONL file of `{"id", "prompt", "checks"}` records (another pool)."""
    path = Path(path)
    if not path.is_file():
        raise RsiHubError(f"{path}: prompt file not found.")
    with path.open(encoding="utf-8") as f:
        return as_pool_prompts(json.loads(line) for line in f if line.strip())


def eligible_prompts(
    prompts: Iterable[PoolPrompt], *, eligible: Eligible | None = None, limit: int | None = None
) -> list[PoolPrompt]:
    """The prompts synth may generate from: eligible ids only, the first `limit` of them."""
    eligible = eligible or pool_eligible
    out: list[PoolPrompt] = []
    for prompt in prompts:
        if limit is not None and len(out) >= limit:
            break
        if eligible(prompt.id):
            out.append(prompt)
    return out


def holdout_index() -> Any:
    """The suites' index over every held-out suite (exact and 8-gram near-duplicate matching)."""
    try:
        from rsi_hub.suites.holdout import HoldoutIndex
    except ImportError as err:
        raise RsiHubError(
            "rsi_hub.suites.holdout is not installed in this checkout: the contamination audit "
            "uses its HoldoutIndex."
        ) from err
    return HoldoutIndex.from_suites()


def _suite_of(holdout_id: str) -> str:
    # Holdout ids are "<suite>-<position>" ("if818-0001", "if3k-3000").
    return holdout_id.rsplit("-", 1)[0]


def audit_data(data_path: Path, *, index: Any = None) -> dict[str, Any]:
    """The contamination audit of a data file: no user prompt may match any holdout prompt.

    Every distinct user prompt of the rows is matched against the suites' `HoldoutIndex`
    (exact or near-duplicate, the suites' definitions). `passed` is true only with zero overlap
    with every holdout suite; `overlap` counts matching rows per suite and `matches` lists them.
    """
    index = index if index is not None else holdout_index()
    verdicts: dict[str, str | None] = {}
    matches: list[dict[str, Any]] = []
    rows = 0
    for row in read_jsonl(Path(data_path)):
        rows += 1
        users = [m["content"] for m in row["messages"] if m["role"] == "user"]
        for prompt in users:
            if prompt not in verdicts:
                verdicts[prompt] = index.match(prompt)
            hit = verdicts[prompt]
            if hit is not None:
                matches.append({"prompt_id": row.get("prompt_id"), "holdout_id": hit})
    suites = sorted(getattr(index, "suites", None) or ("if818", "if263", "if3k"))
    overlap = {name: 0 for name in suites}
    for match in matches:
        suite = _suite_of(str(match["holdout_id"]))
        overlap[suite] = overlap.get(suite, 0) + 1
    return {
        "passed": not matches,
        "method": "rsi_hub.suites.holdout.HoldoutIndex.match (exact or 8-gram near-duplicate)",
        "rows_checked": rows,
        "distinct_prompts": len(verdicts),
        "overlap": overlap,
        "matches": matches[:100],  # enough to act on; the count is in `overlap`
    }
