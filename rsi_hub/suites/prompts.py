"""Generation-pool prompts as the generators see them: the record, its selection and checks.

`rsi-hub synth` and the RLVR trainer (`rsi_hub.train.rlvr`) draw their prompts here, so that
both use one eligibility rule: pool prompts pass the suites' `pool_eligible` (no id ≡ 33 mod 70,
no holdout match; card section 2), prompts from a file pass `not_a_holdout` (`HoldoutIndex`:
exact or 8-gram near-duplicate). Nothing here re-decides what a holdout match is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from rsi_hub.errors import PromptError, SuiteFileError

PromptId = str | int
HOLDOUTS: tuple[str, ...] = ("if818", "if263", "if3k")


@dataclass(frozen=True)
class PoolPrompt:
    """One generation-pool prompt: its pool id, the user text and the checker constraints."""

    id: PromptId
    prompt: str
    checks: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PoolPrompt:
        """Build from a suite record: `id`, `prompt` (or `user`/`text`) and `checks` keys."""
        text = next((record[k] for k in ("prompt", "user", "text") if k in record), None)
        if "id" not in record or not isinstance(text, str):
            raise PromptError(
                f"pool record {dict(record)!r:.120} needs an `id` and a string `prompt`."
            )
        checks = record.get("checks") or record.get("constraints") or ()
        return cls(id=record["id"], prompt=text, checks=tuple(dict(c) for c in checks))


# Whether a generator may use a prompt.
Eligible = Callable[[PoolPrompt], bool]


def as_pool_prompts(records: Iterable[PoolPrompt | Mapping[str, Any] | Any]) -> list[PoolPrompt]:
    """Normalise suite items (our dataclass, dicts, or objects with id/prompt/checks) to ours."""
    out: list[PoolPrompt] = []
    for record in records:
        if isinstance(record, PoolPrompt):
            out.append(record)
        elif isinstance(record, Mapping):
            out.append(PoolPrompt.from_record(record))
        else:
            # The suites package may hand out its own dataclass: read it by attribute.
            out.append(PoolPrompt.from_record(vars(record) if hasattr(record, "__dict__") else {}))
    return out


def load_pool() -> Iterator[PoolPrompt]:
    """The generation pool's eligible prompts in id order, drawn lazily (ids are integers)."""
    from rsi_hub.suites.pool import pool_prompts

    for row in pool_prompts():
        yield PoolPrompt.from_record(row)


def pool_eligible(prompt: PoolPrompt) -> bool:
    """The suites' rule for a pool id: in the pool, not ≡ 33 (mod 70), no holdout match."""
    from rsi_hub.suites.pool import pool_eligible as pool_id_eligible

    return bool(pool_id_eligible(prompt.id))


@cache
def holdout_indexes() -> dict[str, Any]:
    """One `HoldoutIndex` per held-out suite (built once per process)."""
    from rsi_hub.suites.holdout import HoldoutIndex

    return {name: HoldoutIndex.from_suites([name]) for name in HOLDOUTS}


def not_a_holdout(prompt: PoolPrompt) -> bool:
    """The guard for prompts from a file (another pool): the text matches no held-out prompt."""
    return all(index.match(prompt.prompt) is None for index in holdout_indexes().values())


def load_prompt_file(path: str | Path) -> list[PoolPrompt]:
    """Prompts from a JSONL file of `{"id", "prompt", "checks"}` records (another pool)."""
    path = Path(path)
    if not path.is_file():
        raise SuiteFileError(f"{path}: prompt file not found.", path=path)
    with path.open(encoding="utf-8") as f:
        return as_pool_prompts(json.loads(line) for line in f if line.strip())


def eligible_prompts(
    prompts: Iterable[PoolPrompt], *, eligible: Eligible, limit: int | None = None
) -> list[PoolPrompt]:
    """The eligible prompts only, the first `limit` of them.

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
    """The pool (or a prompt file) restricted to what a generator may use, up to `limit` prompts.

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


def validate_prompts(prompts: Sequence[PoolPrompt]) -> None:
    """Refuse, before any generation, a prompt the checker cannot judge.

    A malformed constraint would raise in the middle of a run; a prompt without constraints
    would pass every sample unchecked. Either names the prompt id.
    """
    from rsi_hub.checker import CheckError, validate_checks

    for prompt in prompts:
        if not prompt.checks:
            raise PromptError(
                f"prompt {prompt.id!r} has no checks: nothing to verify it against.", field="checks"
            )
        try:
            validate_checks(list(prompt.checks))
        except CheckError as err:
            raise PromptError(f"prompt {prompt.id!r}: {err}", field="checks") from err


def prompt_ids_sha256(prompt_ids: list[Any]) -> str:
    """sha256 of the prompt ids, one per line: names a prompt set in run records."""
    return hashlib.sha256("".join(f"{i}\n" for i in prompt_ids).encode("utf-8")).hexdigest()
