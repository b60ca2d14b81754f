"""Statistics of a run, computed from its ledger (so they cover every session of a resumed run)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from rsi_hub.suites.answers import Malformed
from rsi_hub.synth.filter import KEPT, REJECTED


def ledger_stats(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Rows kept / generated, malformed counts, and pass rates per check type and per prompt.

    `per_check[type]` counts only judged samples (malformed ones never reached the checker);
    `prompts_with_a_pass` is the number of prompts with at least one kept sample.
    """
    status = Counter()
    judged_by_type: Counter[str] = Counter()
    passed_by_type: Counter[str] = Counter()
    prompts: set[str] = set()
    prompts_kept: set[str] = set()
    for entry in entries:
        status[entry["status"]] += 1
        prompts.add(str(entry["prompt_id"]))
        if entry["status"] == KEPT:
            prompts_kept.add(str(entry["prompt_id"]))
        for result in entry.get("checks", []):
            judged_by_type[result["type"]] += 1
            passed_by_type[result["type"]] += bool(result["passed"])
    generated = sum(status.values())
    kept = status[KEPT]
    return {
        "generated": generated,
        "judged": kept + status[REJECTED],
        "kept": kept,
        "kept_fraction": kept / generated if generated else 0.0,
        "malformed": {m.value: status[m.value] for m in Malformed},
        "prompts_sampled": len(prompts),
        "prompts_with_a_pass": len(prompts_kept),
        "per_check": {
            t: {
                "judged": judged_by_type[t],
                "passed": passed_by_type[t],
                "pass_rate": passed_by_type[t] / judged_by_type[t],
            }
            for t in sorted(judged_by_type)
        },
    }
