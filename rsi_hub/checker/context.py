"""Per-response derived values, computed lazily and at most once per `check()` call.

One `Context` is built per call and shared by every constraint of that call, so a response
judged on `word_eq`, `word_max` and `sent` is stripped once, split once and segmented once.
Each accessor is a plain method with an explicit cache slot (not `functools.cached_property`,
which takes a lock on every first access in Python 3.11 and costs more than a short split).

The text preliminaries implemented here are normative (spec/checks.md, "Text preliminaries").
Every regular expression in this module is linear: possessive quantifiers and disjoint
alternatives leave the engine nothing to backtrack into.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rsi_hub.checker.stream_safe import stream_safe

if TYPE_CHECKING:
    from rsi_hub.checker.jsonutil import Fence, JsonParse

# Curly to straight quotes, the only quote folding the spec asks for.
_QUOTES = (("‘", "'"), ("’", "'"), ("“", '"'), ("”", '"'))

# A sentence: starts at its first letter or digit and runs to the next terminator (a run of
# . ! ? plus closers, followed by white space or the end) or to the end. A . ! ? run that is
# not followed by white space (3.5, e.g., "?!x") stays inside the sentence. One match per
# sentence, so the number of matches is the sentence count.
_SENTENCE = re.compile(r"""[^\W_](?:[^.!?]++|[.!?]++["'”’)\]]*+(?!\s|\Z))*+""")

# A paragraph break: a newline, then one or more (optionally blank-padded) newlines. Because it
# swallows every following blank line and `t` is stripped, the pieces between breaks are never
# empty, so paragraphs = breaks + 1 for a non-empty `t`.
_PARA_BREAK = re.compile(r"\n(?:[^\S\n]*+\n)++")

_WHITE = re.compile(r"\s")
_ALNUM = re.compile(r"[^\W_]")
_ENDERS = frozenset(".!?")

# ASCII bytes that are not letters or digits: deleting them from an ASCII response leaves
# nothing exactly when it holds no letter or digit, at memory speed.
_ASCII_NON_ALNUM = bytes(b for b in range(128) if not chr(b).isalnum())


def fold_text(s: str) -> str:
    """NFKC (of the Stream-Safe form, so linear on any input) and curly quotes to straight:
    N(s) without the white-space collapse."""
    if s.isascii():
        return s
    s = unicodedata.normalize("NFKC", stream_safe(s))
    # `in` + `replace` per quote: C-speed scans, where str.translate on non-ASCII text goes
    # character by character through a Python mapping (tens of times slower).
    for curly, straight in _QUOTES:
        if curly in s:
            s = s.replace(curly, straight)
    return s


@lru_cache(maxsize=4096)
def needle_pattern(needle: str, whole_words: bool) -> re.Pattern[str]:
    """A pattern that finds the normalised `needle` in `fold()`-form text exactly where it
    occurs in N(t): the needle's single spaces become white-space runs.

    With `whole_words`, the match must stand between non-word characters. The left boundary is
    a fixed-width look-behind placed *after* the first literal (`light(?<!\\wlight)`) instead
    of a leading `(?<!\\w)`: a pattern that starts with a literal gets the engine's fast
    literal scan, about ten times faster on a typical response than trying every position.
    """
    first, *rest = needle.split(" ")
    head = re.escape(first)
    tail = "".join(r"\s++" + re.escape(tok) for tok in rest)
    if whole_words:
        return re.compile(f"{head}(?<!\\w{head}){tail}(?!\\w)")
    return re.compile(head + tail)


def normalize(s: str) -> str:
    """Light normalisation N(s): NFKC, curly quotes to straight, white-space runs to one space,
    strip.

    NFKC runs on the text's Stream-Safe form (UAX #15, `stream_safe`): a run of more than 30
    combining marks gets a U+034F after every 30, which keeps NFKC linear; shorter runs, i.e.
    all human text, normalise exactly as plain NFKC.
    """
    return " ".join(fold_text(s).split())


@lru_cache(maxsize=8192)
def norm_param(s: str) -> str:
    """`normalize()` for constraint parameters, which repeat across calls: cached."""
    return normalize(s)


class Context:
    """Everything the checks of one call derive from the response, each computed on demand.

    `t` is the response stripped of leading and trailing white space (spec: "t"). Check modules
    may keep their own derived values with `memo(key, compute)`.
    """

    __slots__ = (
        "_fold",
        "_fold_cf",
        "_json",
        "_memo",
        "_norm",
        "_norm_cf",
        "_sentences",
        "_text_lf",
        "_words",
        "response",
        "t",
    )

    def __init__(self, response: str) -> None:
        self.response = response
        self.t = response.strip()
        self._words: list[str] | None = None
        self._fold: str | None = None
        self._fold_cf: str | None = None
        self._norm: str | None = None
        self._norm_cf: str | None = None
        self._sentences: int | None = None
        self._text_lf: str | None = None
        self._json: JsonParse | None = None
        self._memo: dict[str, Any] | None = None

    # --- words -------------------------------------------------------------------------------
    def words(self) -> list[str]:
        """`t.split()`: the spec's words."""
        w = self._words
        if w is None:
            w = self._words = self.t.split()
        return w

    def word_count(self) -> int:
        """`len(t.split())`."""
        return len(self.words())

    # --- normalised forms --------------------------------------------------------------------
    def fold(self) -> str:
        """`t` with NFKC and curly quotes straightened, white space left as is.

        Equal to N(t) up to white-space runs, so a needle without white space is a substring of
        N(t) exactly when it is a substring of `fold()`; that saves the collapse for most checks.
        """
        v = self._fold
        if v is None:
            v = self._fold = fold_text(self.t)
        return v

    def fold_cf(self) -> str:
        """`fold().casefold()`."""
        v = self._fold_cf
        if v is None:
            v = self._fold_cf = self.fold().casefold()
        return v

    def norm(self) -> str:
        """N(t): the light normalisation of the spec."""
        v = self._norm
        if v is None:
            v = self._norm = " ".join(self.fold().split())
        return v

    def norm_head(self, m: int) -> str:
        """A prefix of N(t) at least `m` characters long (or all of N(t)), for `startswith`.

        Cut at a white-space character: NFKC never composes or reorders across one and the
        collapse turns it into the separating space, so N(t[:cut]) is a prefix of N(t).
        """
        if self._norm is None:
            t = self.t
            size = 2 * m + 64
            while size < len(t):
                ws = _WHITE.search(t, size)
                if ws is None:
                    break
                head = normalize(t[: ws.start()])
                if len(head) >= m:
                    return head
                size *= 4
        return self.norm()

    def norm_tail(self, m: int) -> str:
        """A suffix of N(t) at least `m` characters long (or all of N(t)), for `endswith`."""
        if self._norm is None:
            t = self.t
            size = 2 * m + 64
            while size < len(t):
                cut = len(t) - size
                # The last white space before `cut`, looked for in a reversed window.
                ws = _WHITE.search(t[max(0, cut - 4096) : cut][::-1])
                if ws is None:
                    break
                tail = normalize(t[cut - 1 - ws.start() :])
                if len(tail) >= m:
                    return tail
                size *= 4
        return self.norm()

    def norm_cf(self) -> str:
        """`N(t).casefold()`."""
        v = self._norm_cf
        if v is None:
            v = self._norm_cf = self.norm().casefold()
        return v

    # --- sentences and paragraphs ----------------------------------------------------------
    def sentence_count(self) -> int:
        """Number of sentences: pieces between terminators that hold a letter or a digit."""
        v = self._sentences
        if v is None:
            t = self.t
            if (
                len(t) > 4096
                and t.isascii()
                and not t.encode("ascii").translate(None, _ASCII_NON_ALNUM)
            ):
                v = 0  # no letter or digit at all (e.g. a wall of punctuation)
            else:
                v = len(_SENTENCE.findall(t))
            self._sentences = v
        return v

    def ends_properly(self) -> bool:
        """Whether the last sentence is ended: no letter or digit follows the last `.`, `!` or
        `?` of `t` (trailing markup, quotes, brackets or an emoticon may: `**Three.**`,
        `Done. :)`). A `t` without letters or digits, the empty one included, ends properly.
        """
        t = self.t
        if t[-1:] in _ENDERS:  # the common case: the text ends with its terminator
            return True
        last = max(t.rfind("."), t.rfind("!"), t.rfind("?"))
        return _ALNUM.search(t, last + 1) is None

    def paragraph_count(self) -> int:
        """Non-empty pieces of `t` separated by one or more blank lines."""
        t = self.t
        if not t:
            return 0
        return len(_PARA_BREAK.findall(t)) + 1

    # --- lines -------------------------------------------------------------------------------
    def text_lf(self) -> str:
        """`t` with CRLF and lone CR line breaks turned into LF, for the line-based checks."""
        v = self._text_lf
        if v is None:
            t = self.t
            v = t.replace("\r\n", "\n").replace("\r", "\n") if "\r" in t else t
            self._text_lf = v
        return v

    def nl_text(self) -> str:
        """`text_lf()` with a newline in front, so every line starts after a `\n`.

        Line patterns then begin with a literal newline, which the regex engine finds with a
        fast scan, instead of a `^` anchor it would have to try at every position.
        """
        return self.memo("nl_text", lambda: "\n" + self.text_lf())

    # --- JSON --------------------------------------------------------------------------------
    def fences(self) -> list[Fence]:
        """The fenced code blocks of `t`, in order (see `jsonutil.find_fences`)."""
        from rsi_hub.checker.jsonutil import find_fences

        return self.memo("fences", lambda: find_fences(self.text_lf()))

    def json(self) -> JsonParse:
        """The response as JSON under the spec's rule (whole text, else its one fenced block)."""
        v = self._json
        if v is None:
            from rsi_hub.checker.jsonutil import parse_response_json

            v = self._json = parse_response_json(self.t, self.fences)
        return v

    # --- extension point ---------------------------------------------------------------------
    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """Return the value cached under `key`, computing it with `compute()` the first time."""
        m = self._memo
        if m is None:
            m = self._memo = {}
        try:
            return m[key]
        except KeyError:
            v = m[key] = compute()
            return v
