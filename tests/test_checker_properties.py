"""Property tests (hypothesis): `check` never raises on any text for any valid constraint, is
deterministic, judges each constraint the same alone or with others, and its fast paths agree
with plain reference implementations written straight from the spec."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rsi_hub.checker import REGISTRY, check
from rsi_hub.checker.checks_counts import count_word
from rsi_hub.checker.context import Context, normalize

# Any code point, lone surrogates included, plus an alphabet dense in the characters the
# checks care about, so that structure (terminators, fences, tables, lists) actually occurs.
ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=()), max_size=300)
SPECIAL = ".!?\"')]”’“‘\n\r\t -*•|:`{}[],/0123456789aAzZeé\u0301\u0316ǅﬁ_ ＡⅫ\u00a0\u2028\u034f"
DENSE_TEXT = st.text(alphabet=SPECIAL, max_size=300)
TEXT = st.one_of(ANY_TEXT, DENSE_TEXT)

SMALL = st.integers(min_value=0, max_value=40)
WORD = st.text(min_size=1, max_size=12).filter(lambda w: w.strip() != "")
# RE2 patterns, including shapes that backtrack catastrophically in Python's re.
PATTERNS = [
    r"\d+",
    r"^[A-Z]",
    r"(?i)hello",
    r"\.$",
    r"(?m)^- ",
    r"[^\w\s]{2,}",
    "a|b",
    r"(a+)+b",
    r"(?:a?){30}a{30}",
    r"(\w+\s?)*$",
]


def constraint_strategy(kind: str) -> st.SearchStrategy[dict]:
    params: dict[str, st.SearchStrategy] = {
        "word_eq": st.fixed_dictionaries({"n": SMALL}),
        "word_min": st.fixed_dictionaries({"n": SMALL}),
        "word_max": st.fixed_dictionaries({"n": SMALL}),
        "word_band": st.tuples(SMALL, SMALL).map(lambda p: {"lo": min(p), "hi": max(p)}),
        "word_times": st.fixed_dictionaries({"word": WORD, "n": SMALL}),
        "sent": st.fixed_dictionaries({"n": SMALL}),
        "sent_min": st.fixed_dictionaries({"n": SMALL}),
        "sent_max": st.fixed_dictionaries({"n": SMALL}),
        "para": st.fixed_dictionaries({"n": SMALL}),
        "contains": st.fixed_dictionaries({"text": st.text(max_size=12)}),
        "contains_norm": st.fixed_dictionaries({"text": st.text(max_size=12)}),
        "no_word": st.fixed_dictionaries({"word": WORD}),
        "no_char": st.fixed_dictionaries(
            {"char": st.characters()}, optional={"case_sensitive": st.booleans()}
        ),
        "startswith": st.fixed_dictionaries({"text": st.text(max_size=12)}),
        "endswith": st.fixed_dictionaries({"text": st.text(max_size=12)}),
        "bullet": st.fixed_dictionaries({"n": SMALL}),
        "numbered": st.fixed_dictionaries({"n": SMALL}),
        "numbered_start": st.fixed_dictionaries({"k": SMALL}),
        "table_rows": st.fixed_dictionaries({"n": SMALL}),
        "json_keys": st.fixed_dictionaries({"keys": st.lists(st.text(max_size=5), min_size=1)}),
        "json_keys_any": st.fixed_dictionaries({"keys": st.lists(st.text(max_size=5), min_size=1)}),
        "json_array_len": st.fixed_dictionaries({"n": SMALL}),
        "is_upper": st.just({}),
        "is_lower": st.just({}),
        "char_max": st.fixed_dictionaries({"n": SMALL}),
        "number_eq": st.fixed_dictionaries(
            {
                "value": st.one_of(
                    st.integers(-(10**6), 10**6),
                    st.integers(-(10**500), 10**500),
                    st.floats(allow_nan=False, allow_infinity=False),
                )
            },
            optional={"tol": st.floats(min_value=0, max_value=10)},
        ),
        "choice": st.fixed_dictionaries({"answer": st.sampled_from("ABCDE")}),
        "regex": st.fixed_dictionaries({"pattern": st.sampled_from(PATTERNS)}),
        "contains_any": st.fixed_dictionaries(
            {"texts": st.lists(st.text(max_size=8), min_size=1, max_size=3)},
            optional={"case_sensitive": st.booleans()},
        ),
        "json_valid": st.just({}),
        "tool_call": st.fixed_dictionaries(
            {
                "name": st.text(max_size=6),
                "args": st.one_of(
                    st.lists(st.text(max_size=4), max_size=3),
                    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
                ),
            }
        ),
        "refusal": st.just({}),
        "no_refusal": st.just({}),
    }
    return params[kind].map(lambda p: {"type": kind, **p})


# code_tests spawns a process per call; it has its own tests (test_checker_sandbox.py).
KINDS = sorted(k for k in REGISTRY if k != "code_tests")
CONSTRAINTS = st.lists(st.sampled_from(KINDS).flatmap(constraint_strategy), min_size=1, max_size=6)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(response=TEXT, checks=CONSTRAINTS)
@example(response="[" * 5000, checks=[{"type": "json_valid"}])
@example(response="```\n" * 50, checks=[{"type": "json_keys", "keys": ["a"]}])
@example(response="", checks=[{"type": k} for k in ("is_upper", "json_valid", "refusal")])
def test_never_raises_deterministic_and_independent(response: str, checks: list[dict]) -> None:
    first = check(response, checks)
    second = check(response, checks)
    assert first == second
    assert len(first.results) == len(checks)
    assert first.passed == all(r.passed for r in first.results)
    for c, r in zip(checks, first.results, strict=True):
        assert r.type == c["type"]
        assert (r.reason == "") == r.passed
        # The shared per-response context must not change any verdict.
        assert check(response, [c]).results[0] == r


# --- reference implementations, written the slow, obvious way from the spec -------------------


def ref_sentences(t: str) -> tuple[int, bool]:
    """(sentences, last sentence ended) by walking the text character by character.

    Ended (checker 1.1): no letter or digit after the last . ! or ? (or in t, if it has none).
    """
    closers = "\"'”’)]"
    pieces, start, i, n = [], 0, 0, len(t)
    after_last = t
    for j, ch in enumerate(t):
        if ch in ".!?":
            after_last = t[j + 1 :]
    ends = not any(ch.isalnum() for ch in after_last)
    while i < n:
        if t[i] in ".!?":
            j = i
            while j < n and t[j] in ".!?":
                j += 1
            k = j
            while k < n and t[k] in closers:
                k += 1
            if k == n or t[k].isspace():
                pieces.append(t[start:i])
                start = k
            i = k
        else:
            i += 1
    pieces.append(t[start:])
    return sum(1 for p in pieces if any(ch.isalnum() for ch in p)), ends


def ref_paragraphs(t: str) -> int:
    return sum(1 for p in re.split(r"\n\s*\n", t) if p.strip())


def ref_word_count(t: str, word: str) -> int:
    w = normalize(word).casefold()
    text = normalize(t).casefold()
    return len(re.findall(r"(?<!\w)" + re.escape(w) + r"(?!\w)", text))


@settings(max_examples=500, deadline=None)
@given(TEXT)
@example("Wait... what?! No.")
@example('He said "Stop." Then')
@example("a.)")
@example("One. Two. **Three.**")
@example("Done. :)")
@example("")
def test_sentences_match_reference(response: str) -> None:
    ctx = Context(response)
    assert (ctx.sentence_count(), ctx.ends_properly()) == ref_sentences(ctx.t)


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXT, st.text(alphabet="a \n\t\r.", max_size=60)))
def test_paragraphs_match_reference(response: str) -> None:
    ctx = Context(response)
    assert ctx.paragraph_count() == ref_paragraphs(ctx.t)


@settings(max_examples=400, deadline=None)
@given(TEXT, st.one_of(WORD, st.sampled_from(["a", "a a", "é", "ﬁ", "1", "a.", "-"])))
def test_word_match_matches_reference(response: str, word: str) -> None:
    assert count_word(Context(response), word) == ref_word_count(response.strip(), word)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.data())
def test_contains_any_slice_of_normalised_text(response: str, data: st.DataObject) -> None:
    n = normalize(response.strip())
    i = data.draw(st.integers(0, len(n)))
    j = data.draw(st.integers(i, len(n)))
    needle = n[i:j]
    if normalize(needle) != needle:
        return  # the needle itself would be normalised differently (edge spaces)
    assert check(response, [{"type": "contains", "text": needle}]).passed
    upper = needle.upper()
    expected = normalize(upper).casefold() in n.casefold()
    assert check(response, [{"type": "contains_norm", "text": upper}]).passed == expected
    head, tail = n[:j], n[i:]
    if normalize(head) == head:
        assert check(response, [{"type": "startswith", "text": head}]).passed
    if normalize(tail) == tail:
        assert check(response, [{"type": "endswith", "text": tail}]).passed


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_normalize_is_idempotent_nfkc(s: str) -> None:
    n = normalize(s)
    assert normalize(n) == n
    assert unicodedata.is_normalized("NFKC", n) or any("\ud800" <= ch <= "\udfff" for ch in n)


@settings(max_examples=300, deadline=None)
@example("a\na", "a a")
@given(st.text(alphabet="ab _-.\n", max_size=200), st.sampled_from(["a", "ab", "a a", "b_", "-"]))
def test_short_loop_and_regex_word_counts_agree(text: str, word: str) -> None:
    from rsi_hub.checker.checks_counts import _bounded_count
    from rsi_hub.checker.context import needle_pattern

    w = normalize(word).casefold()
    if " " in w:
        text = normalize(text)  # count_word looks for phrases in N(t), single spaces only
    assert _bounded_count(text, w) == len(needle_pattern(w, True).findall(text))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 10**60),
    st.integers(-400, 400),
    st.one_of(st.integers(-(10**450), 10**450), st.floats(allow_nan=False, allow_infinity=False)),
    st.one_of(st.just(0), st.integers(0, 10**30), st.floats(0, 1e30)),
)
@example(7, 12345 - 400, 7, 0)  # 7e11945 is not 7
@example(5, 2, 500, 0)
@example(1, -1, 0.1, 0)  # a float constraint means its shortest decimal
def test_number_eq_matches_exact_fractions(m: int, e: int, value: float, tol: float) -> None:
    from fractions import Fraction

    got = Fraction(m) * Fraction(10) ** e
    want = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    slack = Fraction(repr(tol)) if isinstance(tol, float) else Fraction(tol)
    c = {"type": "number_eq", "value": value, "tol": tol}
    assert check(f"The answer is {m}e{e}.", [c]).passed == (abs(got - want) <= slack)
