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

import re2

from rsi_hub.checker.re2_patterns import compiled, utf8

#: U+034F COMBINING GRAPHEME JOINER: what UAX #15 inserts to break a run.
CGJ = "\u034f"
#: The most non-starters UAX #15 lets stand in a row.
MAX_NON_STARTERS = 30

# Marks the 2nd, 3rd ... non-starter of a character that decomposes into several, while a run
# is cut into pieces; NUL is no non-starter, so it never occurs in a run itself.
_MORE = "\x00"


@dataclass(frozen=True, slots=True)
class _Tables:
    lead: dict[str, int]  # non-starters at the start of the char's NFKD, where > 0
    trail: dict[str, int]  # non-starters at the end of the char's NFKD, where > 0
    heavy: tuple[str, ...]  # `lead` chars worth more than one non-starter
    partial: tuple[str, ...]  # `lead` chars whose NFKD also holds a starter (none in 14.0)
    shortest: int  # fewer `lead` chars in a row can never pass the limit
    run: re2._Regexp  # on UTF-8: a run of `lead` chars long enough to pass the limit


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


def _re2_class(chars: set[str]) -> str:
    """An RE2 character class of `chars`, as ranges of code points."""
    points = sorted(map(ord, chars))
    ranges: list[list[int]] = []
    for cp in points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return "[" + "".join(f"\\x{{{a:x}}}-\\x{{{b:x}}}" for a, b in ranges) + "]"


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
    partial: list[str] = []
    for cp in sorted(marks | decomposable):
        ch = chr(cp)
        d = unicodedata.normalize("NFKD", ch)
        first, last = _edge_count(d)
        if first:
            lead[ch] = first
            if first < len(d):
                partial.append(ch)
        if last:
            trail[ch] = last
    # A run can pass the limit only if the char before it brings its trailing non-starters
    # and then enough `lead` chars follow: fewer than `shortest` of them never can.
    shortest = (MAX_NON_STARTERS - max(trail.values())) // max(lead.values()) + 1
    return _Tables(
        lead,
        trail,
        tuple(ch for ch, n in lead.items() if n > 1),
        tuple(partial),
        shortest,
        compiled(f"{_re2_class(set(lead))}{{{shortest},}}"),
    )


def _by_character(run: str, count: int, t: _Tables) -> str:
    """UAX #15's process over one run, character by character (needed only when the run holds
    a character whose NFKD mixes non-starters and starters, which Unicode 14 has none of)."""
    out: list[str] = []
    for ch in run:
        n = t.lead[ch]
        if count + n > MAX_NON_STARTERS:
            out.append(CGJ)
            count = 0
        out.append(ch)
        count = count + n if ch not in t.partial else t.trail.get(ch, 0)
    return "".join(out)


def _safe_run(run: str, count: int, t: _Tables) -> str:
    """One run of `lead` chars in Stream-Safe form, `count` non-starters already before it.

    Every char of the run is nothing but non-starters, so the count only grows: each char
    that is worth k non-starters is followed by k - 1 `_MORE` markers, and the run is cut
    every 30 units, moved back to the start of a char when a cut would split one. One step
    per piece, with C-speed string operations in between.
    """
    if any(ch in run for ch in t.partial):
        return _by_character(run, count, t)
    units = run
    for ch in t.heavy:
        if ch in units:
            units = units.replace(ch, ch + _MORE * (t.lead[ch] - 1))
    pieces: list[str] = []
    start, room, end = 0, MAX_NON_STARTERS - count, len(units)
    while start + room < end:
        cut = start + room
        while units[cut] == _MORE:  # never cut inside a character
            cut -= 1
        pieces.append(units[start:cut])
        start, room = cut, MAX_NON_STARTERS
    if not pieces:
        return run
    pieces.append(units[start:])
    return CGJ.join(pieces).replace(_MORE, "")


def _char_before(raw: bytes, end: int) -> str:
    """The character that ends at byte `end` of UTF-8 `raw`."""
    start = end - 1
    while start > end - 4 and raw[start] & 0xC0 == 0x80:  # continuation bytes
        start -= 1
    return raw[start:end].decode("utf-8", "surrogatepass")


def stream_safe(s: str) -> str:
    """`s` in the Stream-Safe Text Format: a CGJ wherever more than 30 non-starters (counted in
    NFKD form) would follow each other; `s` itself when no run is that long. Linear time: one
    RE2 scan of the UTF-8 text finds the long runs, and only those are rebuilt."""
    if s.isascii():
        return s
    t = _tables()
    raw = utf8(s)  # lone surrogates kept as bytes; no run holds one
    # Every `lead` char is U+0300 or above, two UTF-8 bytes or more: a text with fewer extra
    # bytes than a long run needs has none, which settles most text without a scan.
    if len(raw) - len(s) < t.shortest:
        return s
    pieces: list[str] = []
    done = 0
    for m in t.run.finditer(raw):
        start, end = m.span()
        # The char before a maximal run of `lead` chars is no `lead` char: the count it leaves
        # is its trailing non-starters (0 for a plain starter or the text's start).
        before = t.trail.get(_char_before(raw, start), 0) if start else 0
        pieces.append(raw[done:start].decode("utf-8", "surrogatepass"))
        pieces.append(_safe_run(raw[start:end].decode("utf-8"), before, t))
        done = end
    if not pieces:
        return s
    pieces.append(raw[done:].decode("utf-8", "surrogatepass"))
    return "".join(pieces)
