"""Count checks: words, word occurrences, sentences, paragraphs, characters.

Reasons have one shape, `expected <what>, got <count> (<signed difference>)`, and `detail` holds
`expected`, `got` and `delta` (got - expected; for a band or bound, the distance to the nearest
allowed count), so that failure analysis reads numbers, not strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rsi_hub.checker.context import Context, needle_pattern, norm_param
from rsi_hub.checker.core import Param, count_result, plural, register

_PASS: tuple[bool, str, None] = (True, "", None)


@register("word_eq", Param("n", "int_ge0", example=50), summary="word count == n")
def word_eq(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when `len(t.split()) == n`; reason e.g. `expected 50 words, got 48 (-2)`."""
    n = c["n"]
    got = ctx.word_count()
    if got == n:
        return _PASS
    return count_result(plural(n, "word"), got, n, "words")


@register("word_min", Param("n", "int_ge0", example=50), summary="word count >= n")
def word_min(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the word count is at least n."""
    n = c["n"]
    got = ctx.word_count()
    if got >= n:
        return _PASS
    return count_result(f"at least {plural(n, 'word')}", got, n, "words")


@register("word_max", Param("n", "int_ge0", example=50), summary="word count <= n")
def word_max(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when the word count is at most n."""
    n = c["n"]
    got = ctx.word_count()
    if got <= n:
        return _PASS
    return count_result(f"at most {plural(n, 'word')}", got, n, "words")


@register(
    "word_band",
    Param("lo", "int_ge0", example=40),
    Param("hi", "int_ge0", example=60),
    summary="lo <= word count <= hi",
)
def word_band(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when lo <= word count <= hi; the delta is measured to the nearer bound."""
    lo, hi = c["lo"], c["hi"]
    got = ctx.word_count()
    if lo <= got <= hi:
        return _PASS
    return count_result(f"{lo} to {hi} words", got, lo if got < lo else hi, "words")


def _bounded_count(text: str, w: str) -> int:
    """Non-overlapping occurrences of `w` standing between non-word characters, scanning left
    to right like `re.findall` (a candidate that fails a boundary is retried one character on).
    Called only when `w` occurs a few times, so this Python loop stays short."""
    count = 0
    size = len(w)
    end = len(text)
    i = text.find(w)
    while i >= 0:
        before = text[i - 1] if i else " "
        j = i + size
        after = text[j] if j < end else " "
        if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
            count += 1
            i = text.find(w, j)
        else:
            i = text.find(w, i + 1)
    return count


def count_word(ctx: Context, word: str) -> int:
    """Occurrences of `word` (or phrase) in the response by the spec's word match.

    Case-insensitive (full Unicode case folding), on the normalised text N(t), so `don't`
    matches `don’t`, `ﬁne` matches `fine`, and a phrase matches across any white space
    (`thank you` matches `Thank\\nyou`). A word boundary is any character that is not a letter,
    digit or `_` (Python's `\\w`), or the text's ends. Occurrences are counted without overlap,
    left to right (`ha ha` occurs once in `ha ha ha`).
    """
    w = norm_param(word).casefold()
    # A single word matches the same in the un-collapsed fold (white space is a non-word
    # character either way), which is cheaper to get than N(t); a phrase needs N(t)'s spaces.
    text = ctx.norm_cf() if " " in w else ctx.fold_cf()
    hits = text.count(w)
    if hits == 0:
        return 0
    if hits <= 64:
        return _bounded_count(text, w)
    # Many candidates (e.g. a hostile wall of one word): let the regex engine count them.
    return len(needle_pattern(w, True).findall(text))


@register(
    "word_times",
    Param("word", "word", example="light"),
    Param("n", "int_ge0", example=3),
    summary="the word (or phrase) occurs exactly n times, by word match",
)
def word_times(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when `word` occurs exactly n times by word match (see `count_word`)."""
    n = c["n"]
    got = count_word(ctx, c["word"])
    if got == n:
        return _PASS
    return count_result(f"{c['word']!r} {plural(n, 'time')}", got, n, "occurrences")


@register("sent", Param("n", "int_ge0", example=5), summary="exactly n sentences, ending in . ! ?")
def sent(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when t has exactly n sentences and the last one is ended by . ! or ?.

    Sentence rule (spec): a terminator is a run of . ! ? (plus closing quotes or brackets) that
    is followed by white space or the end; sentences are the pieces between terminators holding
    a letter or digit. So `3.5` and `e.g.x` do not end a sentence and `Wait... what?!` is two.
    Ended (spec, checker 1.1): no letter or digit follows the last . ! or ?, so trailing
    markup or an emoticon is fine (`One. Two. **Three.**`, `Done. :)`) and `One. Two` is not
    ended. An empty response has 0 sentences and passes n = 0.
    """
    n = c["n"]
    got = ctx.sentence_count()
    ends = ctx.ends_properly()
    if got == n and ends:
        return _PASS
    if got == n:
        return (
            False,
            f"expected {plural(n, 'sentence')} ending in . ! or ?, got {got} but the text "
            "does not end with . ! or ?",
            {"expected": n, "got": got, "delta": 0, "unit": "sentences", "terminated": False},
        )
    passed, reason, detail = count_result(plural(n, "sentence"), got, n, "sentences")
    if not ends:
        reason += "; the text does not end with . ! or ?"
    detail["terminated"] = ends
    return passed, reason, detail


@register("sent_min", Param("n", "int_ge0", example=3), summary="at least n sentences")
def sent_min(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when there are at least n sentences (no terminator needed at the end)."""
    n = c["n"]
    got = ctx.sentence_count()
    if got >= n:
        return _PASS
    return count_result(f"at least {plural(n, 'sentence')}", got, n, "sentences")


@register("sent_max", Param("n", "int_ge0", example=3), summary="at most n sentences")
def sent_max(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when there are at most n sentences (no terminator needed at the end)."""
    n = c["n"]
    got = ctx.sentence_count()
    if got <= n:
        return _PASS
    return count_result(f"at most {plural(n, 'sentence')}", got, n, "sentences")


@register("para", Param("n", "int_ge0", example=3), summary="exactly n paragraphs")
def para(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when t has exactly n paragraphs (non-empty pieces between blank lines).

    A blank line is a newline followed by optional white space (spaces, tabs, CR) and another
    newline, so CRLF text and lines holding only spaces separate paragraphs too; a single
    newline does not.
    """
    n = c["n"]
    got = ctx.paragraph_count()
    if got == n:
        return _PASS
    return count_result(plural(n, "paragraph"), got, n, "paragraphs")


@register("char_max", Param("n", "int_ge0", example=280), summary="len(t) <= n")
def char_max(ctx: Context, c: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
    """Passes when `len(t) <= n`, counting Unicode code points of the stripped response."""
    n = c["n"]
    got = len(ctx.t)
    if got <= n:
        return _PASS
    return count_result(f"at most {plural(n, 'character')}", got, n, "characters")
