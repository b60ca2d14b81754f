"""The generator's building blocks: stable randomness, number words, plans, feasibility rules."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rsi_hub.checker import check
from rsi_hub.numbers import number_words
from rsi_hub.suites.feasibility import problems
from rsi_hub.suites.generator import make_prompt
from rsi_hub.suites.mixes import (
    IF263_MIX,
    IF818_COUNTS,
    IF818_STRUCTURAL,
    POOL_MIX,
    compatible,
    exact_plan,
    sample_types,
)
from rsi_hub.suites.phrasings import (
    BANNED_WORDS,
    COUNT_WORDS,
    ENDS,
    FILLER,
    LETTERS,
    PHRASES,
    PHRASINGS,
    STARTS,
)
from rsi_hub.suites.responder import reference_response
from rsi_hub.suites.rng import Rng, stable_hash
from rsi_hub.suites.topics import GROUPS, TOPICS, for_group


def test_rng_is_stable_across_processes() -> None:
    code = (
        "from rsi_hub.suites.rng import Rng, stable_hash;"
        "r = Rng('a', 1); print([r.below(1000) for _ in range(5)], stable_hash('x'))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": "."},
        ).stdout
        for seed in ("1", "2")
    }
    r = Rng("a", 1)
    assert outs == {f"{[r.below(1000) for _ in range(5)]} {stable_hash('x')}\n"}


def test_number_words() -> None:
    assert number_words(40) == "forty"
    assert number_words(7) == "seven"
    assert number_words(37) == "thirty-seven"
    assert number_words(100) == "one hundred"
    assert number_words(125) == "one hundred and twenty-five"
    with pytest.raises(ValueError):
        number_words(1000)


def test_topics_are_hundreds_and_split_disjointly() -> None:
    assert len(TOPICS) >= 300 and len(set(TOPICS)) == len(TOPICS)
    parts = [set(for_group(TOPICS, g)) for g in GROUPS]
    assert sum(len(p) for p in parts) == len(TOPICS)
    assert all(not (a & b) for i, a in enumerate(parts) for b in parts[i + 1 :])


def test_every_check_type_has_several_phrasings() -> None:
    assert all(len(p) >= 3 for p in PHRASINGS.values())


def test_filler_never_uses_a_constrained_word_and_survives_each_letter_ban() -> None:
    words = set(FILLER)
    assert not words & {w.lower() for w in COUNT_WORDS + BANNED_WORDS}
    for letter in LETTERS:
        assert len([w for w in FILLER if letter not in w]) >= 20


def test_fixed_texts_have_no_inner_terminator() -> None:
    for text in STARTS + PHRASES:
        assert not any(ch in text for ch in ".!?"), text
    for text in ENDS:
        assert not any(ch in text[:-1] for ch in ".!?"), text


def test_exact_plan_hits_every_count_and_leaves_no_prompt_empty() -> None:
    plan = exact_plan(818, IF818_COUNTS, IF818_STRUCTURAL, Rng("test"))
    counts: dict[str, int] = {}
    for types in plan:
        assert types, "every prompt carries a check"
        for t in types:
            counts[t] = counts.get(t, 0) + 1
    assert counts == {**IF818_COUNTS, **IF818_STRUCTURAL}


def test_sampled_types_are_compatible() -> None:
    for mix in (IF263_MIX, POOL_MIX):
        for i in range(300):
            types = sample_types(mix, Rng("t", i))
            assert types
            for j, t in enumerate(types):
                assert compatible(types[:j], t), types


@pytest.mark.parametrize(
    ("checks", "fragment"),
    [
        (
            [{"type": "no_word", "word": "team"}, {"type": "startswith", "text": "Dear team,"}],
            "clashes",
        ),
        ([{"type": "sent", "n": 2}, {"type": "endswith", "text": "Warm wishes"}], "terminator"),
        ([{"type": "is_upper"}, {"type": "endswith", "text": "See you soon!"}], "lower case"),
        (
            [{"type": "no_char", "char": ","}, {"type": "contains_norm", "text": "a, b"}],
            "occurs in",
        ),
        ([{"type": "json_keys", "keys": ["a"]}, {"type": "sent", "n": 2}], "cannot also carry"),
        ([{"type": "word_eq", "n": 3}, {"type": "sent", "n": 5}], "needs at least"),
        (
            [{"type": "word_times", "word": "light", "n": 2}, {"type": "no_word", "word": "light"}],
            "clashes",
        ),
        (
            [
                {"type": "word_times", "word": "city", "n": 2},
                {"type": "json_keys", "keys": ["city"]},
            ],
            "word_times",
        ),
        ([{"type": "para", "n": 4}, {"type": "sent", "n": 2}], "paragraphs"),
        ([{"type": "no_char", "char": c} for c in "eaot"], "too few words"),
        ([{"type": "no_char", "char": " "}], "not one visible character"),
        ([{"type": "bullet", "n": 2}, {"type": "numbered", "n": 2}], "more than one format"),
    ],
)
def test_feasibility_rules_reject_impossible_combinations(
    checks: list[dict[str, object]], fragment: str
) -> None:
    assert any(fragment in p for p in problems(checks)), problems(checks)


def test_make_prompt_is_deterministic_and_satisfiable() -> None:
    types = ("startswith", "word_times", "no_char", "sent", "word_eq")
    first = make_prompt(Rng("k", 1), "pool", types)
    assert first == make_prompt(Rng("k", 1), "pool", types)
    assert [c["type"] for c in first.checks] != [] and not problems(first.checks)
    assert sorted(c["type"] for c in first.checks) == sorted(types)
    row = {"prompt": first.prompt, "checks": first.checks}
    assert check(reference_response(row), first.checks).passed
