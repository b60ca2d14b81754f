"""Unicode's Stream-Safe Text Format (UAX #15, section 13), so that NFKC stays linear.

CPython's `unicodedata.normalize` puts each run of non-starters (characters of canonical
combining class > 0) into canonical order with an insertion sort: a response of one letter and
80,000 combining marks in reverse class order takes seconds, and twice the marks four times as
long. The Stream-Safe Text Process bounds every run: it inserts U+034F COMBINING GRAPHEME JOINER
(a starter, so reordering never crosses it) wherever a run would exceed 30 non-starters. Runs are
counted in NFKD form, because a character can decompose into several non-starters (U+0344 into
two, U+FF9E into one although it is a starter itself) or end with some (`ǅ` ends with a caron).

Text that holds no run longer than 30 is returned unchanged, so N(s) differs from plain NFKC
only on such runs, which no human text has.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress

#: U+034F COMBINING GRAPHEME JOINER: what UAX #15 inserts to break a run.
CGJ = "\u034f"
#: The most non-starters UAX #15 lets stand in a row.
MAX_NON_STARTERS = 30


@dataclass(frozen=True, slots=True)
class _Tables:
    lead: dict[str, int]  # non-starters at the start of the char's NFKD, where > 0
    trail: dict[str, int]  # non-starters at the end of the char's NFKD, where > 0
    whole: frozenset[str]  # chars whose NFKD is non-starters only
    run: re.Pattern[str]  # a run of `lead` chars long enough to reach past the limit
    simple: re.Pattern[str]  # chars whose NFKD is exactly one non-starter


def _edge_count(decomposed: str) -> tuple[int, int]:
    """Non-starters at the start and at the end of a decomposed string."""
    combining = unicodedata.combining
    lead = 0
    for ch in decomposed:
        if not combining(ch):
            break
        lead += 1
    trail = 0
    for ch in reversed(decomposed):
        if not combining(ch):
            break
        trail += 1
    return lead, trail


def _char_class(chars: set[str]) -> str:
    return "[" + "".join(re.escape(c) for c in sorted(chars)) + "]"


@lru_cache(maxsize=1)
def _tables() -> _Tables:
    """The per-character facts the process needs, from this Python's Unicode database.

    Built once, on the first non-ASCII text: only characters with a non-zero combining class
    or with a decomposition can have non-starters in their NFKD, and `map` over the code space
    finds those at C speed.
    """
    code_points = range(sys.maxunicode + 1)
    classes = bytes(map(unicodedata.combining, map(chr, code_points)))
    marks = {m.start() for m in re.finditer(rb"[^\x00]", classes)}
    decomposable = set(compress(code_points, map(unicodedata.decomposition, map(chr, code_points))))
    lead: dict[str, int] = {}
    trail: dict[str, int] = {}
    whole: set[str] = set()
    simple: set[str] = set()
    for cp in marks | decomposable:
        ch = chr(cp)
        d = unicodedata.normalize("NFKD", ch)
        first, last = _edge_count(d)
        if first:
            lead[ch] = first
        if last:
            trail[ch] = last
        if first == len(d):
            whole.add(ch)
            if first == 1:
                simple.add(ch)
    # A run can pass the limit only if the char before it brings its trailing non-starters
    # and then enough `lead` chars follow: fewer than `shortest` of them never can.
    shortest = (MAX_NON_STARTERS - max(trail.values())) // max(lead.values()) + 1
    return _Tables(
        lead,
        trail,
        frozenset(whole),
        re.compile(f"{_char_class(set(lead))}{{{shortest},}}"),
        re.compile(f"{_char_class(simple)}*"),
    )


def _safe_run(run: str, count: int, t: _Tables) -> str:
    """One run of `lead` chars in Stream-Safe form, `count` non-starters already before it."""
    if t.simple.fullmatch(run):
        # One non-starter per char: a CGJ after the first `30 - count`, then after every 30.
        first = MAX_NON_STARTERS - count
        head, rest = run[:first], run[first:]
        chunks = [rest[i : i + MAX_NON_STARTERS] for i in range(0, len(rest), MAX_NON_STARTERS)]
        return CGJ.join([head, *chunks]) if rest else run
    out: list[str] = []
    lead, trail, whole = t.lead, t.trail, t.whole
    for ch in run:  # UAX #15's process, character by character
        n = lead[ch]
        if count + n > MAX_NON_STARTERS:
            out.append(CGJ)
            count = 0
        out.append(ch)
        count = count + n if ch in whole else trail.get(ch, 0)
    return "".join(out)


def stream_safe(s: str) -> str:
    """`s` in the Stream-Safe Text Format: a CGJ wherever more than 30 non-starters (counted in
    NFKD form) would follow each other; `s` itself when no run is that long. Linear time."""
    if s.isascii():
        return s
    t = _tables()
    pieces: list[str] = []
    done = 0
    for m in t.run.finditer(s):
        start = m.start()
        # The char before a maximal run of `lead` chars is no `lead` char: the count it leaves
        # is its trailing non-starters (0 for a plain starter or the text's start).
        before = t.trail.get(s[start - 1], 0) if start else 0
        pieces.append(s[done:start])
        pieces.append(_safe_run(m.group(), before, t))
        done = m.end()
    if not pieces:
        return s
    pieces.append(s[done:])
    return "".join(pieces)
