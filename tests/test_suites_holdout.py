"""Holdout matching, the generation pool's eligibility rules, and the overlap audit."""

from __future__ import annotations

import pytest

from rsi_hub.checker import check
from rsi_hub.suites import (
    NEAR_DUP_THRESHOLD,
    POOL_SIZE,
    HoldoutIndex,
    audit,
    load_suite,
    normalize_prompt,
    pool_eligible,
    pool_prompt,
    pool_prompts,
    reference_response,
)
from rsi_hub.suites import pool as pool_module

HELD = (
    "Write an email to your landlord about the broken heating in the flat. Use exactly forty "
    'words. Do not use the word "very". End your response with "Thank you for reading."'
)


@pytest.fixture(scope="module")
def index() -> HoldoutIndex:
    return HoldoutIndex([("h-1", HELD), ("h-2", "Summarize the plot of Hamlet in two sentences.")])


def test_threshold_is_stated() -> None:
    assert NEAR_DUP_THRESHOLD == 0.5


def test_normalize_prompt() -> None:
    assert normalize_prompt("  Hello,\n“World”!  ") == "hello world"
    assert normalize_prompt("ＡＢＣ  def") == "abc def"  # NFKC folds full-width letters


def test_exact_match_after_normalisation(index: HoldoutIndex) -> None:
    variant = "  " + HELD.upper().replace('"', "“").replace(". ", ".\n\n") + "  "
    assert index.match(variant) == "h-1"
    assert index.matches(variant)[0].exact
    assert index.match("summarize the plot of hamlet, in two sentences!") == "h-2"


def test_near_duplicate_with_light_edits_is_matched(index: HoldoutIndex) -> None:
    # One word changed, one word added, case and punctuation changed: a light rewrite.
    edited = HELD.replace("forty", "fifty").replace("Write an", "Please write an").lower()
    found = index.matches(edited.replace('"', "'"))
    assert found and found[0].id == "h-1" and not found[0].exact
    assert NEAR_DUP_THRESHOLD <= found[0].overlap < 1


def test_holdout_pasted_inside_a_longer_prompt_is_matched(index: HoldoutIndex) -> None:
    longer = "You are a helpful assistant. Please do the following task carefully. " + HELD
    longer += " Also add a short joke at the end about cats and dogs living together."
    assert index.match(longer) == "h-1"


def test_unrelated_prompt_is_not_matched(index: HoldoutIndex) -> None:
    assert (
        index.match("Explain how photosynthesis works to a ten-year-old in three sentences.")
        is None
    )
    assert index.match("Write an email.") is None


def test_every_holdout_prompt_matches_itself_in_the_default_index() -> None:
    idx = pool_module.holdout_index()
    rows = [r for name in ("if818", "if263", "if3k") for r in load_suite(name)]
    assert len(idx) == len(rows) == 818 + 263 + 3000
    assert all(idx.match(r["prompt"]) == r["id"] for r in rows[::50])


def test_pool_ids_congruent_to_33_mod_70_are_never_eligible() -> None:
    reserved = [i for i in range(POOL_SIZE) if i % 70 == 33]
    assert len(reserved) == 263
    assert not any(pool_eligible(i) for i in reserved)
    if263 = load_suite("if263").rows
    assert [pool_prompt(i)["prompt"] for i in reserved[:3]] == [r["prompt"] for r in if263[:3]]


def test_pool_eligibility_bounds_and_holdout_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not pool_eligible(-1) and not pool_eligible(POOL_SIZE)
    assert pool_eligible(0) and pool_eligible(1)
    row = pool_prompt(1)
    assert isinstance(row["id"], int) and row == pool_prompt(1)
    # A pool prompt that matched any held-out prompt would be ineligible.
    fake = HoldoutIndex([("if818-9999", row["prompt"].replace("Write", "Please write"))])
    monkeypatch.setattr(pool_module, "holdout_index", lambda: fake)
    assert not pool_eligible(1)


def test_pool_prompts_are_deterministic_and_satisfiable() -> None:
    first = list(pool_prompts(0, 400))
    assert first == list(pool_prompts(0, 400))
    assert [r["id"] for r in first] == [i for i in range(400) if i % 70 != 33]
    sample = first + [pool_prompt(i) for i in range(400, POOL_SIZE, 7) if i % 70 != 33]
    bad = [r["id"] for r in sample if not check(reference_response(r), r["checks"]).passed]
    assert not bad


def test_audit_reports_zero_overlaps_over_the_whole_pool() -> None:
    report = audit()
    assert report.pool_audited == POOL_SIZE - 263
    assert len(report.pairs) == 6
    assert report.clean, report.format()
    assert "audit: clean" in report.format()
