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


def audit_data(data_path: Path) -> dict[str, Any]:
    """The suites package's contamination audit of a data file (zero overlap with every holdout)."""
    report = _suites().audit_file(data_path)
    report = dict(report) if not hasattr(report, "to_dict") else report.to_dict()
    if "passed" not in report:
        raise RsiHubError("the contamination audit returned no `passed` field.")
    return report
