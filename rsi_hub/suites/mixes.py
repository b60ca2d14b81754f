"""Suite compositions: which check types each prompt of a suite carries.

IF-818 is planned exactly, so the number of prompts carrying each check type equals the card's
§5 column; the other suites draw each prompt's types from a mix of rates.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from rsi_hub.suites.feasibility import (
    CASE_TYPES,
    LENGTH_TYPES,
    SENTENCE_TYPES,
    STRUCTURAL_EXTRAS,
    STRUCTURAL_TYPES,
)
from rsi_hub.suites.rng import Rng

# Card §5, "prompts carrying it", per check type.
IF818_COUNTS: dict[str, int] = {
    "word_eq": 86,
    "word_times": 142,
    "sent": 603,
    "contains_norm": 113,
    "no_word": 111,
    "word_max": 53,
    "startswith": 90,
    "endswith": 100,
    "no_char": 88,
    "para": 7,
}
# The 26 prompts carrying structural checks (card §5): each of the eight types present.
IF818_STRUCTURAL: dict[str, int] = {
    "bullet": 4,
    "numbered": 4,
    "numbered_start": 3,
    "table_rows": 3,
    "json_keys": 3,
    "json_array_len": 3,
    "json_keys_any": 3,
    "is_upper": 3,
}
IF818_SIZE = 818
MAX_TYPES = 5  # more constraints than this in one prompt reads as a puzzle, not a request

# Canonical order of types within a plan entry.
TYPE_ORDER: tuple[str, ...] = (
    "bullet", "numbered", "numbered_start", "table_rows", "json_keys", "json_keys_any",
    "json_array_len", "is_upper", "is_lower", "startswith", "endswith", "contains",
    "contains_norm", "word_times", "no_word", "no_char", "para", "sent", "sent_min",
    "sent_max", "word_eq", "word_max", "word_min", "word_band", "char_max",
)  # fmt: skip


@dataclass(frozen=True)
class Mix:
    """A sampled composition: a share of structural prompts and a rate per prose check type."""

    p_structural: float
    structural: Mapping[str, float]
    rates: Mapping[str, float]


# IF-3k: the IF-818 mix in expectation (same types, same rates), drawn rather than planned.
IF3K_MIX = Mix(
    p_structural=sum(IF818_STRUCTURAL.values()) / IF818_SIZE,
    structural={t: float(n) for t, n in IF818_STRUCTURAL.items()},
    rates={t: n / (IF818_SIZE - sum(IF818_STRUCTURAL.values())) for t, n in IF818_COUNTS.items()},
)
# IF263: its own mix, wider than IF-818's (bands, minimums, exact-case text, lower case).
IF263_MIX = Mix(
    p_structural=0.12,
    structural={t: 1.0 for t in (*IF818_STRUCTURAL, "is_lower")},
    rates={
        "sent": 0.45, "sent_min": 0.05, "sent_max": 0.05, "word_eq": 0.12, "word_max": 0.10,
        "word_min": 0.06, "word_band": 0.08, "char_max": 0.03, "word_times": 0.20,
        "contains": 0.06, "contains_norm": 0.10, "no_word": 0.14, "no_char": 0.12,
        "startswith": 0.12, "endswith": 0.12, "para": 0.06,
    },
)  # fmt: skip
# The generation pool: every IF type, weighted towards the count checks the synthetic data
# targets (card §2, stage lensyn).
POOL_MIX = Mix(
    p_structural=0.12,
    structural={t: 1.0 for t in (*IF818_STRUCTURAL, "is_lower")},
    rates={
        "sent": 0.55, "sent_min": 0.04, "sent_max": 0.04, "word_eq": 0.30, "word_max": 0.08,
        "word_min": 0.05, "word_band": 0.06, "char_max": 0.02, "word_times": 0.30,
        "contains": 0.05, "contains_norm": 0.15, "no_word": 0.15, "no_char": 0.12,
        "startswith": 0.12, "endswith": 0.14, "para": 0.05,
    },
)  # fmt: skip


def compatible(types: Collection[str], new: str) -> bool:
    """Whether a prompt carrying `types` may also carry `new` (type-level rules only)."""
    if new in types or len(types) >= MAX_TYPES:
        return False
    structural = [t for t in types if t in STRUCTURAL_TYPES]
    if new in STRUCTURAL_TYPES:
        return not structural and all(t in STRUCTURAL_EXTRAS for t in types)
    if structural and new not in STRUCTURAL_EXTRAS:
        return False
    for group in (LENGTH_TYPES, SENTENCE_TYPES, CASE_TYPES):
        if new in group and any(t in group for t in types):
            return False
    return True


def ordered(types: Collection[str]) -> tuple[str, ...]:
    """The types in canonical order."""
    return tuple(t for t in TYPE_ORDER if t in types)


def sample_types(mix: Mix, rng: Rng) -> tuple[str, ...]:
    """One prompt's check types, drawn from a mix; never empty, always compatible."""
    chosen: list[str] = []
    if rng.chance(mix.p_structural):
        names = list(mix.structural)
        chosen.append(rng.weighted(names, [mix.structural[n] for n in names]))
    names = list(mix.rates)
    rng.shuffle(names)  # so that, of two exclusive types, neither always wins
    for name in names:
        if rng.chance(mix.rates[name]) and compatible(chosen, name):
            chosen.append(name)
    if not chosen:
        candidates = [n for n in names if compatible(chosen, n)]
        chosen.append(rng.weighted(candidates, [mix.rates[n] for n in candidates]))
    return ordered(chosen)


def exact_plan(
    size: int, counts: Mapping[str, int], structural: Mapping[str, int], rng: Rng
) -> list[tuple[str, ...]]:
    """Per-prompt check types such that each type is carried by exactly `counts[type]` prompts.

    Structural prompts are placed first, one type each; then each prose type goes to randomly
    chosen compatible prompts; finally any prompt left without a check takes one from a prompt
    that has two or more, so every prompt carries at least one and the totals stay exact.
    """
    slots: list[list[str]] = [[] for _ in range(size)]
    kinds = [t for t, n in structural.items() for _ in range(n)]
    rng.shuffle(kinds)
    for position, kind in zip(rng.sample(range(size), len(kinds)), kinds, strict=True):
        slots[position].append(kind)
    for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        candidates = [i for i in range(size) if compatible(slots[i], name)]
        if len(candidates) < count:
            raise ValueError(f"only {len(candidates)} prompts can carry {name}, need {count}")
        rng.shuffle(candidates)
        for i in candidates[:count]:
            slots[i].append(name)
    donors = [i for i in range(size)]
    rng.shuffle(donors)
    for empty in (i for i in range(size) if not slots[i]):
        for donor in donors:
            movable = [t for t in slots[donor] if t in counts] if len(slots[donor]) > 1 else []
            if movable:
                name = rng.choice(movable)
                slots[donor].remove(name)
                slots[empty].append(name)
                break
        else:
            raise ValueError("no prompt can give up a check to an empty one")
    return [ordered(s) for s in slots]
