"""The evaluation suites as data: IF-818, IF263, IF-3k, the generation pool, EV4 and PREF.

Public API:

- `load_suite(name_or_path)`: a validated, hash-verified suite (`if818`, `if263`, `if3k`, `ev4`).
- `reference_response(row)`: a response passing every check of a suite row (tests, demos).
- `normalize_prompt`, `HoldoutIndex` (`.match(prompt)`), `NEAR_DUP_THRESHOLD`: holdout guard;
  `holdout_index()` is the cached index over the committed IF-818, IF263 and IF-3k prompts.
- `pool_prompt`, `pool_prompts`, `pool_eligible`, `POOL_SIZE`: the generation pool.
- `load_pref(source=None)`: PREF preference pairs.
- `suite_stats`, `audit`, `write_suite_files`: what `rsi-hub suites` runs.

Suites: IF-818 (818 prompts, card §5's per-check counts exactly), IF263 (263, its own wider
mix; scored without a system prompt, card §4b), IF-3k (3,000, IF-818's mix drawn from disjoint
subjects), EV4 (82 hand-written prompts, 115 checks, 12 categories, each with a `reference`
answer) and the PREF demo. File format: `rsi_hub.suites.files`; holdout rules:
`rsi_hub.suites.holdout`; the pool: `rsi_hub.suites.pool`.

Only `rsi_hub.checker` and `rsi_hub.errors` are imported from the rest of the package.
"""

from __future__ import annotations

from rsi_hub.suites.build import generate_holdout_suites, suite_files, write_suite_files
from rsi_hub.suites.files import Suite, data_dir, load_suite
from rsi_hub.suites.holdout import NEAR_DUP_THRESHOLD, HoldoutIndex, Match, normalize_prompt
from rsi_hub.suites.pool import (
    POOL_SIZE,
    holdout_index,
    pool_eligible,
    pool_prompt,
    pool_prompts,
)
from rsi_hub.suites.pref import PrefPair, load_pref
from rsi_hub.suites.report import AuditReport, audit, format_stats, suite_stats
from rsi_hub.suites.responder import reference_response

__all__ = [
    "NEAR_DUP_THRESHOLD",
    "POOL_SIZE",
    "AuditReport",
    "HoldoutIndex",
    "Match",
    "PrefPair",
    "Suite",
    "audit",
    "data_dir",
    "format_stats",
    "generate_holdout_suites",
    "holdout_index",
    "load_pref",
    "load_suite",
    "normalize_prompt",
    "pool_eligible",
    "pool_prompt",
    "pool_prompts",
    "reference_response",
    "suite_files",
    "suite_stats",
    "write_suite_files",
]
