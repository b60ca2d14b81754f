"""Feasibility rules: which combinations of checks one response can satisfy together.

`problems(checks)` lists every rule a check list breaks; the generator only emits prompts with
none, and the reference responder (`responder`) proves each one satisfiable by construction (a
test runs it over every suite row). Word matching is asked of the checker itself, so the rules
and the judge can never disagree about what "contains the word" means.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from rsi_hub.checker import check
from rsi_hub.suites.phrasings import FILLER

LIST_TYPES = frozenset({"bullet", "numbered", "numbered_start"})
JSON_TYPES = frozenset({"json_keys", "json_keys_any", "json_array_len"})
STRUCTURAL_TYPES = LIST_TYPES | JSON_TYPES | {"table_rows"}
CASE_TYPES = frozenset({"is_upper", "is_lower"})
SENTENCE_TYPES = frozenset({"sent", "sent_min", "sent_max"})
LENGTH_TYPES = frozenset({"word_eq", "word_min", "word_max", "word_band", "char_max"})
# Types that may appear more than once in one prompt (with different parameters).
REPEATABLE_TYPES = frozenset({"contains", "contains_norm", "no_word", "no_char", "word_times"})
# What a list, table or JSON answer may carry besides its format check.
STRUCTURAL_EXTRAS = frozenset(
    {"no_word", "no_char", "contains", "contains_norm", "word_max", "word_times"}
)
TERMINATORS = ".!?"
# Characters the format itself needs, so a no_char on them is impossible.
_FORMAT_CHARS = {
    "json": set('{}[]":,'),
    "table_rows": set("|-"),
    "numbered": set("0123456789."),
    "numbered_start": set("0123456789."),
}
# The responder writes a 1-word filler per sentence at the very least; it needs this many
# filler words left after removing those with a forbidden character.
MIN_FILLER_WORDS = 20
LIST_ITEMS_STEPS = 3  # items the responder writes for a numbered_start continuation


@lru_cache(maxsize=65536)
def has_word(text: str, word: str) -> bool:
    """True if `word` occurs in `text` by the checker's word match (case-insensitive, bounded)."""
    return not check(text, [{"type": "no_word", "word": word}]).passed


def has_char(text: str, char: str, case_sensitive: bool = False) -> bool:
    """True if `char` occurs in `text` (in either case unless case_sensitive)."""
    if case_sensitive:
        return char in text
    return char.lower() in text.lower() or char.upper() in text.upper()


def filler_without(chars: Iterable[tuple[str, bool]]) -> list[str]:
    """The filler words (in stream order) free of every forbidden (char, case_sensitive)."""
    return list(_filler_without(tuple(sorted(set(chars)))))


@lru_cache(maxsize=1024)
def _filler_without(forbidden: tuple[tuple[str, bool], ...]) -> tuple[str, ...]:
    words = []
    for word in FILLER:
        forms = (word, word.capitalize(), word.upper())
        if not any(has_char(form, c, cs) for c, cs in forbidden for form in forms):
            words.append(word)
    return tuple(words)


def required_texts(checks: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every text the response must contain: openings, closings and required phrases."""
    return [
        str(c["text"])
        for c in checks
        if c["type"] in {"startswith", "endswith", "contains", "contains_norm"}
    ]


def fmt_of(checks: Sequence[Mapping[str, Any]]) -> str:
    """The response format a check list asks for: a structural type, or 'prose'."""
    for c in checks:
        if c["type"] in STRUCTURAL_TYPES:
            return str(c["type"])
    return "prose"


def word_bounds(checks: Sequence[Mapping[str, Any]]) -> tuple[int, float]:
    """(lowest, highest) word count the length checks allow; highest may be infinite."""
    lo, hi = 0, float("inf")
    for c in checks:
        t = c["type"]
        if t in {"word_eq", "word_min"}:
            lo = max(lo, c["n"])
        if t in {"word_eq", "word_max"}:
            hi = min(hi, c["n"])
        if t == "word_band":
            lo, hi = max(lo, c["lo"]), min(hi, c["hi"])
    return lo, hi


def sentence_bounds(checks: Sequence[Mapping[str, Any]]) -> tuple[int, float]:
    """(lowest, highest) sentence count the sentence checks allow."""
    lo, hi = 1, float("inf")
    for c in checks:
        t = c["type"]
        if t in {"sent", "sent_min"}:
            lo = max(lo, c["n"])
        if t in {"sent", "sent_max"}:
            hi = min(hi, c["n"])
    return lo, hi


def fixed_words(checks: Sequence[Mapping[str, Any]]) -> int:
    """Words the response cannot avoid: required texts and counted words."""
    total = sum(len(text.split()) for text in required_texts(checks))
    total += sum(c["n"] * len(str(c["word"]).split()) for c in checks if c["type"] == "word_times")
    return total


def structural_min_words(checks: Sequence[Mapping[str, Any]]) -> int:
    """Fewest words a list, table or JSON answer with these checks can have (1-word items)."""
    fmt = fmt_of(checks)
    params = next(c for c in checks if c["type"] == fmt)
    extra = fixed_words(checks)
    if fmt in {"bullet", "numbered"}:
        return 2 * params["n"] + extra
    if fmt == "numbered_start":
        return 2 * LIST_ITEMS_STEPS + extra
    if fmt == "table_rows":
        # header '| A words | B words |' (<= 8 tokens), separator 1, each row '| x | y |' 5.
        return 9 + 5 * params["n"] + extra
    if fmt == "json_keys":
        return sum(len(k.split()) + 1 for k in params["keys"]) + extra
    if fmt == "json_keys_any":
        return len(params["keys"][0].split()) + 1 + extra
    return params["n"] + extra  # json_array_len: '["a", "b"]' is one token per element


def problems(checks: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every feasibility rule the check list breaks (empty when one response can pass all)."""
    out: list[str] = []
    types = [str(c["type"]) for c in checks]
    for t in set(types):
        if types.count(t) > 1 and t not in REPEATABLE_TYPES:
            out.append(f"{t} appears more than once")
    keys = [tuple(sorted((k, repr(v)) for k, v in c.items())) for c in checks]
    if len(set(keys)) != len(keys):
        out.append("a check is repeated")

    fmt = fmt_of(checks)
    structural = [t for t in types if t in STRUCTURAL_TYPES]
    if len(structural) > 1:
        out.append(f"more than one format: {structural}")
    if fmt != "prose":
        bad = sorted({t for t in types if t not in STRUCTURAL_EXTRAS and t != fmt})
        if bad:
            out.append(f"{fmt} answers cannot also carry {bad}")
    if "is_upper" in types and "is_lower" in types:
        out.append("is_upper with is_lower")

    out += _length_problems(checks, fmt)
    out += _text_problems(checks, fmt)
    return out


def _length_problems(checks: Sequence[Mapping[str, Any]], fmt: str) -> list[str]:
    out: list[str] = []
    w_lo, w_hi = word_bounds(checks)
    if w_lo > w_hi:
        out.append(f"word counts conflict: at least {w_lo}, at most {w_hi}")
    s_lo, s_hi = sentence_bounds(checks)
    if s_lo > s_hi:
        out.append(f"sentence counts conflict: at least {s_lo}, at most {s_hi}")
    for c in checks:
        for name in ("n", "lo", "hi", "k"):
            if name in c and (not isinstance(c[name], int) or c[name] < (1 if name == "k" else 0)):
                out.append(f"{c['type']}: bad {name} {c[name]!r}")
        if c["type"] in SENTENCE_TYPES | {"para", "word_eq", "bullet", "numbered"} and c["n"] < 1:
            out.append(f"{c['type']} needs n >= 1")
        if c["type"] == "word_times" and c["n"] < 1:
            out.append("word_times needs n >= 1 (use no_word for zero)")
    paras = [c["n"] for c in checks if c["type"] == "para"]
    if paras and paras[0] > s_hi:
        out.append(f"{paras[0]} paragraphs need more sentences than the {s_hi} allowed")
    if fmt == "prose":
        minimum = fixed_words(checks) + max(s_lo, paras[0] if paras else 1)
    else:
        minimum = structural_min_words(checks)
    if minimum > w_hi:
        out.append(f"needs at least {minimum} words but at most {w_hi} are allowed")
    for c in checks:
        if c["type"] == "char_max":
            # The responder's filler words are at most 11 characters plus a space each.
            need = sum(len(t) + 1 for t in required_texts(checks)) + 13 * max(minimum, 1)
            if need > c["n"]:
                out.append(f"char_max {c['n']} is below the {need} characters needed")
    return out


def _text_problems(checks: Sequence[Mapping[str, Any]], fmt: str) -> list[str]:
    out: list[str] = []
    types = {str(c["type"]) for c in checks}
    texts = required_texts(checks)
    counted = [str(c["word"]) for c in checks if c["type"] == "word_times"]
    banned = [str(c["word"]) for c in checks if c["type"] == "no_word"]
    json_keys = [
        str(k) for c in checks if c["type"] in {"json_keys", "json_keys_any"} for k in c["keys"]
    ]
    for c in checks:
        if c["type"] not in {"startswith", "endswith", "contains", "contains_norm"}:
            continue
        text = str(c["text"])
        body = text[:-1] if c["type"] == "endswith" else text
        if any(ch in body for ch in TERMINATORS) or any(ch in text for ch in '"\\\n'):
            out.append(f"{c['type']} text {text!r} holds a terminator, quote or newline")
        if c["type"] == "endswith" and text[-1] not in TERMINATORS and types & SENTENCE_TYPES:
            out.append(f"closing {text!r} has no terminator but a sentence count is asked")
        if not text.strip():
            out.append(f"{c['type']} text is empty")
    case_sensitive_texts = [
        str(c["text"]) for c in checks if c["type"] in {"startswith", "endswith", "contains"}
    ]
    if "is_upper" in types and any(ch.islower() for t in case_sensitive_texts for ch in t):
        out.append("is_upper with a required text in lower case")
    if "is_lower" in types and any(ch.isupper() for t in case_sensitive_texts for ch in t):
        out.append("is_lower with a required text in upper case")
    if types & CASE_TYPES and fmt in JSON_TYPES:
        out.append("a JSON answer cannot be all upper or lower case (its keys are fixed)")
    for word in banned:
        for other in texts + counted + json_keys:
            if has_word(other, word) or has_word(word, other):
                out.append(f"no_word {word!r} clashes with required {other!r}")
    for i, word in enumerate(counted):
        for text in texts + json_keys:
            if has_word(text, word):
                out.append(f"word_times {word!r} also occurs in required text {text!r}")
        for other in counted[i + 1 :]:
            if has_word(other, word) or has_word(word, other):
                out.append(f"word_times {word!r} overlaps word_times {other!r}")
    forbidden = [
        (str(c["char"]), bool(c.get("case_sensitive", False)))
        for c in checks
        if c["type"] == "no_char"
    ]
    for char, cs in forbidden:
        if len(char) != 1 or char.isspace():
            out.append(f"no_char {char!r} is not one visible character")
            continue
        for other in texts + counted + json_keys:
            if has_char(other, char, cs):
                out.append(f"no_char {char!r} occurs in required {other!r}")
        if char in TERMINATORS[:1] and (types & SENTENCE_TYPES or fmt == "prose"):
            out.append("no_char '.' leaves no sentence terminator")
        group = "json" if fmt in JSON_TYPES else fmt
        if char in _FORMAT_CHARS.get(group, set()):
            out.append(f"no_char {char!r} is needed by the {fmt} format")
    if forbidden and len(filler_without(forbidden)) < MIN_FILLER_WORDS:
        out.append(f"no_char {[c for c, _ in forbidden]} leaves too few words to write with")
    return out
