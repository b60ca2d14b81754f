"""N(s) on hostile Unicode (checker 1.1): the Stream-Safe Text Format (UAX #15) keeps NFKC linear.

No timings: the properties below prove the invariant that makes NFKC linear (after the
Stream-Safe step no run of non-starters is longer than 30, so CPython's insertion sort of each run
is bounded) and that the step changes nothing else.
"""

from __future__ import annotations

import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rsi_hub.checker import check, normalize
from rsi_hub.checker.stream_safe import CGJ, MAX_NON_STARTERS, stream_safe

# Characters that make up combining runs, each for a reason:
MARKS = [
    "\u0301",  # acute, class 230
    "\u0316",  # grave below, class 220: mixed with 230 it must be reordered
    "\u0327",  # cedilla, class 202
    "\u0334",  # tilde overlay, class 1
    "\u05b0",  # Hebrew sheva, class 10
    "\u0f71",  # Tibetan, class 129
    "\u0340",  # a canonical singleton: decomposes to U+0300
    "\u0344",  # decomposes to two non-starters
    "\u0f73",  # decomposes to two non-starters
    "\uff9e",  # a starter (class 0) whose NFKD is a non-starter
]
STARTERS = [
    "a",
    " ",
    "\u01c5",  # ǅ: NFKD ends with a non-starter (caron) and expands to three characters
    "\u1e09",  # ḉ: NFKD ends with two non-starters
    "\U0001d160",  # a musical note: NFKD ends with two non-starters
    "\ufb01",  # ﬁ: expands under NFKC
    "\u2028",  # line separator: white space
    CGJ,
    "\ud800",  # a lone surrogate
]
RUNS = st.lists(st.tuples(st.sampled_from(MARKS + STARTERS), st.integers(1, 80)), max_size=8).map(
    lambda parts: "".join(ch * k for ch, k in parts)
)
MIXED = st.text(alphabet=MARKS + STARTERS, max_size=200)
TEXTS = st.one_of(RUNS, MIXED)


def _edges(ch: str) -> tuple[int, int, bool]:
    """(leading non-starters, trailing non-starters, all non-starters) of ch's NFKD."""
    d = unicodedata.normalize("NFKD", ch)
    classes = [unicodedata.combining(x) for x in d]
    lead = next((i for i, c in enumerate(classes) if c == 0), len(classes))
    trail = next((i for i, c in enumerate(reversed(classes)) if c == 0), len(classes))
    return lead, trail, lead == len(d)


def ref_stream_safe(s: str) -> str:
    """UAX #15's Stream-Safe Text Process, character by character, as the standard states it."""
    out, count = [], 0
    for ch in s:
        lead, trail, whole = _edges(ch)
        if count + lead > MAX_NON_STARTERS:
            out.append(CGJ)
            count = 0
        out.append(ch)
        count = count + lead if whole else trail
    return "".join(out)


def longest_run(s: str) -> int:
    """The longest run of non-starters in NFKD(s)."""
    best = run = 0
    for ch in unicodedata.normalize("NFKD", s):
        run = run + 1 if unicodedata.combining(ch) else 0
        best = max(best, run)
    return best


def plain_n(s: str) -> str:
    """N(s) of checker 1.0: plain NFKC, straight quotes, collapsed white space."""
    s = unicodedata.normalize("NFKC", s)
    for curly, straight in (("‘", "'"), ("’", "'"), ("“", '"'), ("”", '"')):
        s = s.replace(curly, straight)
    return " ".join(s.split())


@settings(max_examples=300, deadline=None)
@given(TEXTS)
@example("a" + "\u0301" * 31)
@example("\u0344" * 16)
@example("\u1e09" + "\u0301" * 29)
@example("\u01c5" + "\u0344" * 15)
def test_stream_safe_is_the_uax15_process(s: str) -> None:
    safe = stream_safe(s)
    assert safe == ref_stream_safe(s)
    assert longest_run(safe) <= MAX_NON_STARTERS  # the invariant that bounds NFKC's sort
    assert stream_safe(safe) == safe  # idempotent
    assert safe.replace(CGJ, "") == s.replace(CGJ, "")  # it only inserts CGJs


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_short_runs_normalise_exactly_as_nfkc(s: str) -> None:
    if longest_run(s) <= MAX_NON_STARTERS:
        assert stream_safe(s) == s
        assert normalize(s) == plain_n(s)
    else:
        assert normalize(s) == plain_n(stream_safe(s))


def test_long_run_gets_a_cgj_after_every_30_marks() -> None:
    # NFKC composes a + the first acute into á; the CGJ stays where UAX #15 put it.
    assert normalize("a" + "\u0301" * 31) == "á" + "\u0301" * 29 + CGJ + "\u0301"
    assert normalize("a" + "\u0301" * 30) == "á" + "\u0301" * 29  # 30 in a row: untouched
    # U+0344 is two non-starters: 15 fill the 30, the 16th needs a CGJ before it; NFKC turns
    # each into U+0308 U+0301 and sorts nothing across the CGJ.
    assert normalize("a" + "\u0344" * 16) == "ä" + "\u0301" + "\u0308\u0301" * 14 + CGJ + (
        "\u0308\u0301"
    )
    # ḉ ends with two non-starters, which count towards the run that follows it.
    assert stream_safe("\u1e09" + "\u0301" * 29) == "\u1e09" + "\u0301" * 28 + CGJ + "\u0301"


def test_hostile_run_of_80000_marks_is_judged() -> None:
    # Issue 12: this took ~13 s in CPython's NFKC (an insertion sort of 80,000 marks).
    marks = "\u0301" * 40_000 + "\u0316" * 40_000
    hostile = "a" + marks
    # Each run of 30 marks is put in canonical order on its own (220 before 230), nothing moves
    # across a CGJ, and the first acute composes with the a.
    chunks = [marks[i : i + 30] for i in range(0, len(marks), 30)]
    expected = CGJ.join("".join(sorted(c, key=unicodedata.combining)) for c in chunks)
    assert normalize(hostile) == "á" + expected[1:]
    assert normalize(hostile).count(CGJ) == 2666
    verdict = check(hostile, [{"type": "contains", "text": "x"}, {"type": "char_max", "n": 5}])
    assert [r.passed for r in verdict.results] == [False, False]
    assert verdict.results[0].reason == "expected to contain 'x', not found"


def test_tables_premises() -> None:
    # stream_safe skips the scan when a text has fewer extra UTF-8 bytes than a long run
    # needs: that holds only if every character that can extend a run takes 2 bytes or more.
    from rsi_hub.checker.stream_safe import _tables

    t = _tables()
    assert min(len(ch.encode()) for ch in t.lead) >= 2
    assert t.lead["\u0301"] == 1 and t.lead["\u0344"] == 2 and "\uff9e" in t.lead
    assert t.trail["\u01c5"] == 1 and t.trail["\u1e09"] == 2 and "a" not in t.trail
