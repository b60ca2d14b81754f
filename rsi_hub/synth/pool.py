"""The contamination audit of synth's output, with the suites' holdout indexes.

The prompt selection (pool, eligibility, prompt files) is the suites' (`rsi_hub.suites.prompts`),
shared with the RLVR trainer.
Nothing here re-decides what a holdout match is: `HoldoutIndex` (exact or 8-gram near-duplicate)
decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rsi_hub.suites.prompts import holdout_indexes
from rsi_hub.synth.store import read_jsonl


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
