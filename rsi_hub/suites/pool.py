"""The generation pool: integer ids whose prompts feed synthetic-data generation (card §2).

Ids run from 0 to `POOL_SIZE` - 1 = 18,409 (263 × 70). The ids ≡ 33 (mod 70) are exactly 263:
they are IF263's slice of the pool (`prompts_if263.jsonl` row k, counted from 0, is pool id
33 + 70k), which is why the card's generation script skips them. Every other id gets a prompt
drawn on demand from the pool's own subjects and mix, re-drawn until it matches no held-out
prompt, so nothing is stored and `pool_prompts()` is the same sequence in every process.

`pool_eligible(id)` is the rule synthetic generation must follow: false for ids outside the pool,
for every id ≡ 33 (mod 70), and for any id whose prompt matches a held-out prompt (IF-818, IF263
or IF-3k) exactly or as a near-duplicate.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from tqdm import tqdm

from rsi_hub.suites.build import GENERATOR_VERSION, draw_unique
from rsi_hub.suites.files import load_suite
from rsi_hub.suites.generator import Generated
from rsi_hub.suites.holdout import HoldoutIndex
from rsi_hub.suites.mixes import POOL_MIX, sample_types
from rsi_hub.suites.rng import Rng

RESERVED_MODULUS = 70
RESERVED_RESIDUE = 33
POOL_SIZE = 263 * RESERVED_MODULUS


@cache
def holdout_index() -> HoldoutIndex:
    """The index of every committed held-out prompt (IF-818, IF263, IF-3k), built once."""
    return HoldoutIndex.from_suites()


@cache
def _if263_rows() -> list[dict[str, Any]]:
    return load_suite("if263").rows


def is_reserved(pool_id: int) -> bool:
    """True for ids ≡ 33 (mod 70): IF263's slice, never used for generation."""
    return pool_id % RESERVED_MODULUS == RESERVED_RESIDUE


def _check_id(pool_id: int) -> None:
    if not isinstance(pool_id, int) or not 0 <= pool_id < POOL_SIZE:
        raise ValueError(f"pool ids are integers 0..{POOL_SIZE - 1}, got {pool_id!r}")


@cache
def _generated(pool_id: int) -> Generated:
    if is_reserved(pool_id):
        row = _if263_rows()[pool_id // RESERVED_MODULUS]
        return Generated(row["prompt"], row["checks"], row["category"])
    index = holdout_index()
    types = sample_types(POOL_MIX, Rng(GENERATOR_VERSION, "pool", pool_id, "types"))
    return draw_unique(("pool", pool_id), "pool", types, lambda p: index.match(p) is not None)


def reset_caches() -> None:
    """Forget the cached holdout index and pool prompts (after the suite files change)."""
    holdout_index.cache_clear()
    _if263_rows.cache_clear()
    _generated.cache_clear()


def pool_prompt(pool_id: int) -> dict[str, Any]:
    """The pool row for an id: {"id": int, "prompt", "checks", "category"}.

    Reserved ids return their IF263 prompt (so that a caller ignoring `pool_eligible` can be
    caught by a holdout match); never train on them.
    """
    _check_id(pool_id)
    g = _generated(pool_id)
    return {"id": pool_id, "prompt": g.prompt, "checks": list(g.checks), "category": g.category}


def pool_eligible(pool_id: int) -> bool:
    """Whether synthetic generation may use this pool id (see the module docstring)."""
    if not isinstance(pool_id, int) or not 0 <= pool_id < POOL_SIZE or is_reserved(pool_id):
        return False
    return holdout_index().match(_generated(pool_id).prompt) is None


def pool_prompts(
    start: int = 0, stop: int | None = None, progress: bool = False
) -> Iterator[dict[str, Any]]:
    """The eligible pool rows with start <= id < stop, in id order (the same in every run)."""
    stop = POOL_SIZE if stop is None else min(stop, POOL_SIZE)
    for pool_id in tqdm(range(start, stop), desc="pool", disable=not progress):
        if pool_eligible(pool_id):
            yield pool_prompt(pool_id)
