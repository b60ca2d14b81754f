"""Checks -> words -> checks: every phrasing the suites use reads back as the check it states.

The suite generator says a check in words (`rsi_hub.suites.phrasings`, `generator.phrase`); the
Space finds checks in what users write (`rsi_hub.serving.constraints`). A phrasing the
extractor cannot read back is a constraint the Space's checklist silently drops.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from rsi_hub.numbers import number_words, parse_number
from rsi_hub.serving.constraints import describe, extract_specs
from rsi_hub.suites import load_suite
from rsi_hub.suites import phrasings as ph
from rsi_hub.suites.generator import phrase, phrasing_key
from rsi_hub.suites.rng import Rng

Check = dict[str, Any]
COUNTED = (
    "word_eq", "word_max", "word_min", "sent", "sent_min", "sent_max", "para", "bullet",
    "numbered", "table_rows", "json_array_len", "char_max",
)  # fmt: skip
SEEDS = range(4)  # each seed draws digits or words for the numbers


def _checks() -> Iterator[Check]:
    """Every kind of check the generator phrases, with the parameters its banks allow."""
    yield from ({"type": kind, "n": 1} for kind in ("sent", "sent_min", "sent_max"))
    for n in (2, 3, 7, 12, 25, 40, 95, 125, 300):
        yield from ({"type": kind, "n": n} for kind in COUNTED)
        yield {"type": "numbered_start", "k": n + 1}
    yield from ({"type": "word_times", "word": "light", "n": n} for n in (1, 2, 3, 4, 5))
    yield {"type": "word_band", "lo": 30, "hi": 45}
    yield from ({"type": "startswith", "text": text} for text in ph.STARTS)
    yield from ({"type": "endswith", "text": text} for text in ph.ENDS)
    yield from ({"type": "contains", "text": text} for text in ph.CASED_TEXTS)
    yield from ({"type": "contains_norm", "text": text} for text in ph.PHRASES)
    yield from ({"type": "word_times", "word": word, "n": 3} for word in ph.COUNT_WORDS)
    yield from ({"type": "no_word", "word": word} for word in ph.BANNED_WORDS)
    yield from ({"type": "no_char", "char": char} for char in (*ph.LETTERS, *ph.MARKS))
    for keys in (["title"], ["name", "age"], ["city", "country", "population"]):
        yield {"type": "json_keys", "keys": keys}
        yield {"type": "json_keys_any", "keys": keys}
    yield {"type": "is_upper"}
    yield {"type": "is_lower"}


def _cases() -> list[tuple[Check, str]]:
    return [(c, t) for c in _checks() for t in ph.PHRASINGS[phrasing_key(c)]]


def test_every_phrasing_is_covered() -> None:
    assert {template for _, template in _cases()} == {
        template for templates in ph.PHRASINGS.values() for template in templates
    }


@pytest.mark.parametrize("key", sorted(ph.PHRASINGS))
def test_phrase_then_extract_gives_the_check(key: str) -> None:
    wrong = []
    for check, template in _cases():
        if phrasing_key(check) != key:
            continue
        assert describe(check) != check["type"], "the checklist has a label for it"
        for seed in SEEDS:
            text = phrase(check, Rng("roundtrip", seed, json.dumps(check)), template)
            if extract_specs(text) != [check]:
                wrong.append((text, extract_specs(text)))
    assert wrong == []


def test_numbers_were_written_both_ways() -> None:
    """The seeds above phrase some counts in digits and some in words (so both are read)."""
    texts = [
        phrase(c, Rng("roundtrip", seed, json.dumps(c)), t)
        for c, t in _cases()
        if c["type"] in COUNTED
        for seed in SEEDS
    ]
    assert any(re.search(r"\b\d+\b", text) for text in texts)
    assert any(re.search(r"\b(?:forty|twelve|seven|three)\b", text) for text in texts)


def test_number_words_read_back() -> None:
    for n in range(1000):
        assert parse_number(number_words(n)) == n
        assert parse_number(str(n)) == n


@pytest.mark.parametrize("suite", ["if818", "if263", "if3k"])
def test_every_suite_prompt_states_exactly_its_checks(suite: str) -> None:
    """Whole prompts, several constraints in one of three layouts: the extractor finds them all."""
    key = lambda spec: json.dumps(spec, sort_keys=True)  # noqa: E731
    missed = [
        row["id"]
        for row in load_suite(suite)
        if sorted(map(key, extract_specs(row["prompt"]))) != sorted(map(key, row["checks"]))
    ]
    assert missed == []
