"""Finding the verifiable constraints a user states in a chat message, as checker specs.

Rule-based and deliberately literal: each rule is one bounded regular expression for one way of
phrasing one constraint ("in exactly forty words", "use the word 'light' exactly 3 times",
"do not use the letter e", "start with 'Dear team'", "a JSON object with keys name and age" ...).
A constraint is only reported when its phrasing is unambiguous enough to judge; anything else is
left out rather than guessed. Rules run in priority order and a match may not overlap text an
earlier rule already used ("in 40 words or fewer" is `word_max`, never also `word_eq`).

The specs are those of the one checker (`rsi_hub.checker`, spec/checks.md); the Space and the
main job judge them with it (`rsi_hub.space_support.checklist`, `rsi_hub.serving.revise`). Numbers may be digits or words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rsi_hub.numbers import NUMBER_PATTERN, parse_number

Spec = dict[str, Any]

_QUOTED = (
    r"(?:\"[^\"\n]{1,200}\"|“[^”\n]{1,200}”|(?<![A-Za-z])'[^'\n]{1,200}'(?![A-Za-z])"
    r"|‘[^’\n]{1,200}’|`[^`\n]{1,200}`)"
)
_BARE = r"[A-Za-z][A-Za-z'’-]*"
_TERM = rf"(?:{_QUOTED}|{_BARE})"
_SEP = r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+|\s*/\s*)"
_TERMS = rf"{_TERM}(?:{_SEP}{_TERM}){{0,11}}"
_QUOTED_TERMS = rf"{_QUOTED}(?:{_SEP}{_QUOTED}){{0,11}}"
_ITEM_RE = re.compile(rf"{_QUOTED}|{_BARE}")
_NEG = r"(?:do\s+not|don['’]t|dont|never|without|avoid|must\s+not|mustn['’]t|should\s+not|shouldn['’]t|cannot|can['’]t|no)"
_VERB = r"(?:use|using|mention|mentioning|include|including|say|saying|write|writing|contain|containing)"
_TIMES = r"(?:exactly\s+)?(?:(?P<n>{num})\s+times?|(?P<word_n>once|twice|thrice))\b"
_ANSWER = r"(?:(?:your|the|each)\s+)?(?:(?:answer|response|reply|text|message|output|story|poem|essay|email|letter|summary)\s+)?(?:(?:must|should|has\s+to|needs\s+to)\s+)?"
_PUNCTUATION = {
    "comma": ",",
    "exclamation": "!",
    "question": "?",
    "semicolon": ";",
    "colon": ":",
    "hyphen": "-",
    "apostrophe": "'",
    "ampersand": "&",
    "hashtag": "#",
    "hash": "#",
    "asterisk": "*",
    "quotation": '"',
    "period": ".",
    "full": ".",
}
_PUNCTUATION_NAMES = (
    r"(?P<mark>commas?|exclamation\s+(?:marks?|points?)|question\s+marks?|semicolons?|colons?"
    r"|hyphens?|apostrophes?|ampersands?|hashtags?|hash\s+signs?|asterisks?|quotation\s+marks"
    r"|periods|full\s+stops)"
)
_TIMES_WORDS = {"once": 1, "twice": 2, "thrice": 3}


def _num(name: str = "n") -> str:
    return f"(?P<{name}>{NUMBER_PATTERN})"


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] in "\"“'‘`" and text[-1] in "\"”'’`":
        return text[1:-1].strip()
    return text


def _items(text: str) -> list[str]:
    """The terms of a list such as `"a", "b" and "c"` or `name, age or city`."""
    items = []
    for match in _ITEM_RE.finditer(text):
        item = match.group()
        if item.lower() in ("and", "or"):
            continue
        items.append(_unquote(item))
    return items


def _n(match: re.Match[str], name: str = "n") -> int:
    value = parse_number(match.group(name))
    assert value is not None, "the pattern only matches numbers parse_number reads"
    return value


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    build: Callable[[re.Match[str]], list[Spec]]
    requires: str = ""  # a word the message must contain for the rule to apply (lower case)


def _rules(
    patterns: list[str], build: Callable[[re.Match[str]], list[Spec]], requires: str = ""
) -> list[_Rule]:
    """One rule per phrasing (each its own pattern: group names repeat across phrasings)."""
    return [_Rule(re.compile(p, re.IGNORECASE), build, requires) for p in patterns]


def _count(kind: str, offset: int = 0) -> Callable[[re.Match[str]], list[Spec]]:
    def build(match: re.Match[str]) -> list[Spec]:
        return [{"type": kind, "n": max(0, _n(match) + offset)}]

    return build


def _times(match: re.Match[str]) -> list[Spec]:
    n = _TIMES_WORDS[match.group("word_n").lower()] if match.group("word_n") else _n(match)
    return [{"type": "word_times", "word": _unquote(match.group("term")), "n": n}]


def _no_chars(match: re.Match[str]) -> list[Spec]:
    chars = re.findall(r"[\"“'‘`](.)[\"”'’`]|\b([A-Za-z0-9])\b", match.group("chars"))
    return [{"type": "no_char", "char": (a or b).lower()} for a, b in chars]


def _punctuation(match: re.Match[str]) -> list[Spec]:
    first = match.group("mark").split()[0].lower().rstrip("s")
    return [{"type": "no_char", "char": _PUNCTUATION[first]}]


def _each(kind: str, key: str) -> Callable[[re.Match[str]], list[Spec]]:
    def build(match: re.Match[str]) -> list[Spec]:
        return [{"type": kind, key: item} for item in _items(match.group("terms"))]

    return build


def _phrase(kind: str) -> Callable[[re.Match[str]], list[Spec]]:
    def build(match: re.Match[str]) -> list[Spec]:
        return [{"type": kind, "text": _unquote(match.group("text"))}]

    return build


def _word_band(match: re.Match[str]) -> list[Spec]:
    lo, hi = sorted((_n(match, "lo"), _n(match, "hi")))
    return [{"type": "word_band", "lo": lo, "hi": hi}]


def _sentence_band(match: re.Match[str]) -> list[Spec]:
    lo, hi = sorted((_n(match, "lo"), _n(match, "hi")))
    return [{"type": "sent_min", "n": lo}, {"type": "sent_max", "n": hi}]


def _fixed(spec: Spec) -> Callable[[re.Match[str]], list[Spec]]:
    return lambda match: [dict(spec)]


N = _num()
TIMES = _TIMES.format(num=NUMBER_PATTERN)
# Not after "no"/"not": "no fewer than 30 words" is a minimum, "no more than 30" a maximum.
_NOT_NEGATED = r"(?<!\bno\s)(?<!\bnot\s)(?<!\bnot\swrite\s)(?<!\bnot\suse\s)"
_UNDER = rf"{_NOT_NEGATED}(?:fewer\s+than|less\s+than|under|below)"
_AT_MOST = r"(?:at\s+most|no\s+more\s+than|not\s+(?:write\s+|use\s+)?more\s+than|a\s+maximum\s+of|maximum\s+of|max(?:imum)?|up\s+to|within|not\s+(?:to\s+)?exceed(?:ing)?)"
_AT_LEAST = r"(?:at\s+least|no\s+fewer\s+than|no\s+less\s+than|no\s+shorter\s+than|a\s+minimum\s+of|minimum\s+of)"
_EXACT = r"(?:exactly|precisely|in|of|with|using|into|as)"
_START = r"(?:start|starts|starting|begin|begins|beginning|open|opens|opening)"
_END = r"(?:end|ends|ending|finish|finishes|finishing|close|closes|closing|conclude|concludes|concluding)"
_PHRASE_NOUN = r"(?:the\s+(?:exact\s+)?(?:phrase|words?|sentence|line|greeting|question|term)\s+)?"

# In priority order: a later rule never reuses text an earlier one matched.
_CHAR = r"(?:[\"“'‘`].[\"”'’`]|[A-Za-z0-9]\b)"
RULES: list[_Rule] = [
    *_rules(
        [
            rf"\b(?:word|phrase|term|keyword)\s+(?P<term>{_TERM})[^.;!?\n\"“”]{{0,60}}?\b{TIMES}",
            rf"\b(?:use|include|mention|repeat|say|write)\s+(?:the\s+word\s+)?(?P<term>{_TERM})\s+{TIMES}",
            rf"(?P<term>{_QUOTED})\s+(?:(?:should|must)\s+)?(?:appears?|occurs?|be\s+used|is\s+used)\s+{TIMES}",
        ],
        _times,
    ),
    *_rules(
        [
            rf"\b{_NEG}\s+(?:{_VERB}\s+)?(?:the\s+|any\s+)?(?:letters?|characters?)\s+"
            rf"(?P<chars>{_CHAR}(?:{_SEP}{_CHAR}){{0,5}})"
        ],
        _no_chars,
    ),
    *_rules(
        [rf"\b{_NEG}\s+(?:{_VERB}\s+)?(?:any\s+|a\s+single\s+)?{_PUNCTUATION_NAMES}\b"],
        _punctuation,
    ),
    *_rules(
        [
            rf"\b{_NEG}\s+(?:{_VERB}\s+)?(?:the\s+|any\s+of\s+the\s+|any\s+)?"
            rf"(?:words?|terms?|phrases?)\s+(?P<terms>{_TERMS})",
            rf"\b{_NEG}\s+(?:{_VERB}\s+)?(?P<terms>{_QUOTED_TERMS})",
            rf"\bwords?\s+(?P<terms>{_QUOTED_TERMS})\s+(?:must|should|may)\s+not\s+(?:appear|be\s+used)",
        ],
        _each("no_word", "word"),
    ),
    *_rules(
        [
            rf"\b(?<!each\s)(?<!every\s){_START}\s+{_ANSWER}with\s+{_PHRASE_NOUN}(?P<text>{_QUOTED})",
            rf"\bfirst\s+word\s+(?:must|should)\s+be\s+(?P<text>{_TERM})",
            rf"\bfirst\s+words\s+(?:must|should)\s+be\s+(?P<text>{_QUOTED})",
        ],
        _phrase("startswith"),
    ),
    *_rules(
        [
            rf"\b{_END}\s+{_ANSWER}with\s+{_PHRASE_NOUN}(?P<text>{_QUOTED})",
            rf"\b(?:last|final)\s+word\s+(?:must|should)\s+be\s+(?P<text>{_TERM})",
            rf"\b(?:last|final)\s+words\s+(?:of\s+{_ANSWER})?(?:must|should)\s+be\s+(?P<text>{_QUOTED})",
        ],
        _phrase("endswith"),
    ),
    *_rules(
        [
            rf"\bat\s+least\s+one\s+of\s+(?:the\s+)?(?:keys?\s+)?(?P<terms>{_TERMS})",
            rf"\b(?:include|contain|have)\s+(?P<terms>{_QUOTED_TERMS})\s+\(one\s+of\s+them\s+is\s+enough\)",
        ],
        lambda m: [{"type": "json_keys_any", "keys": _items(m.group("terms"))}],
        requires="json",
    ),
    *_rules(
        [
            rf"\b(?:with|has|have|having|contain(?:s|ing)?|include|including)\s+(?:exactly\s+)?"
            rf"(?:the\s+)?(?:keys?|fields?|properties)\s+(?P<terms>{_TERMS})"
        ],
        lambda m: [{"type": "json_keys", "keys": _items(m.group("terms"))}],
        requires="json",
    ),
    *_rules(
        [rf"\bJSON\s+(?:array|list)\s+(?:of|with|containing)\s+(?:exactly\s+)?{N}"],
        _count("json_array_len"),
    ),
    *_rules(
        [
            rf"\b(?:include|includes|including|contain|contains|containing|use|using)\s+"
            rf"(?:the\s+(?:exact\s+)?(?:text|phrase|string|words?)\s+)?(?P<text>{_QUOTED})\s*"
            r"(?:\(\s*same\s+capitali[sz]ation|exactly\s+as\s+written|verbatim)"
        ],
        _phrase("contains"),
    ),
    *_rules(
        [
            rf"\bwork\s+(?:the\s+(?:phrase|words?|terms?)\s+)?(?P<terms>{_QUOTED_TERMS})\s+into\b",
            rf"\b(?:include|includes|including|mention|mentions|mentioning|use|using|contain"
            rf"|contains|containing|feature)\s+(?:the\s+(?:exact\s+)?(?:phrase|sentence|keywords?"
            rf"|words?|terms?|string)\s+)?(?P<terms>{_QUOTED_TERMS})",
            rf"\b(?:include|mention|use)\s+the\s+(?:keywords?|words?|terms?)\s+(?P<terms>{_TERMS})",
        ],
        _each("contains_norm", "text"),
    ),
    *_rules(
        [
            rf"\bbetween\s+{_num('lo')}\s+and\s+{_num('hi')}\s+words\b",
            rf"\bat\s+least\s+{_num('lo')}\s+(?:but|and)\s+(?:no\s+more\s+than|at\s+most)\s+"
            rf"{_num('hi')}\s+words\b",
            rf"\b{_num('lo')}\s+to\s+{_num('hi')}\s+words\b",
            # Digits only: with number words the hyphen belongs to the number ("forty-two").
            r"\b(?P<lo>\d+)\s*[-–]\s*(?P<hi>\d+)\s+words\b",
        ],
        _word_band,
    ),
    *_rules([rf"\b{_UNDER}\s+{N}\s+words\b"], _count("word_max", -1)),
    *_rules([rf"\b{_NOT_NEGATED}(?:more\s+than|over)\s+{N}\s+words\b"], _count("word_min", +1)),
    *_rules(
        [
            rf"\b{_AT_MOST}\s+{N}\s+words?\b",
            rf"\b{N}\s+words\s+or\s+(?:fewer|less|shorter)\b",
            rf"\b{N}[\s-]word\s+limit\b",
        ],
        _count("word_max"),
    ),
    *_rules(
        [rf"\b{_AT_LEAST}\s+{N}\s+words?\b", rf"\b{N}\s+(?:or\s+more\s+words|words\s+or\s+more)\b"],
        _count("word_min"),
    ),
    *_rules(
        [
            rf"\b(?:exactly|precisely|in|using)\s+{N}\s+words?\b",
            rf"\b(?:write|give\s+me|use)\s+(?:exactly\s+)?{N}\s+words\b",
            rf"\b{N}\s+words\s+exactly\b",
            rf"\b{N}-word\b",
            rf"\bbe\s+{N}\s+words\s+long\b",
            rf"\bword\s+count\s+(?:(?:of|at|is|:|=)\s*)?(?:exactly\s+)?{N}\b",
        ],
        _count("word_eq"),
    ),
    *_rules([rf"\b{_UNDER}\s+{N}\s+characters\b"], _count("char_max", -1)),
    *_rules(
        [
            rf"\b{_AT_MOST}\s+{N}\s+characters\b",
            rf"\b{N}\s+characters\s+or\s+(?:fewer|less)\b",
            rf"\b{N}[\s-]character\s+limit\b",
        ],
        _count("char_max"),
    ),
    *_rules(
        [
            rf"\bbetween\s+{_num('lo')}\s+and\s+{_num('hi')}\s+sentences\b",
            rf"\b{_num('lo')}\s+to\s+{_num('hi')}\s+sentences\b",
            r"\b(?P<lo>\d+)\s*[-–]\s*(?P<hi>\d+)\s+sentences\b",
        ],
        _sentence_band,
    ),
    *_rules([rf"\b{_UNDER}\s+{N}\s+sentences\b"], _count("sent_max", -1)),
    *_rules(
        [rf"\b{_AT_MOST}\s+{N}\s+sentences?\b", rf"\b{N}\s+sentences?\s+or\s+(?:fewer|less)\b"],
        _count("sent_max"),
    ),
    *_rules(
        [rf"\b{_AT_LEAST}\s+{N}\s+sentences?\b", rf"\b{N}\s+or\s+more\s+sentences?\b"],
        _count("sent_min"),
    ),
    *_rules(
        [
            rf"\b{_EXACT}\s+{N}\s+sentences?\b",
            rf"\b{N}\s+sentences?\s+(?:exactly|long)\b",
            rf"\b{N}\s+sentences?,?\s+no\s+more\s+(?:and|or)\s+no\s+fewer\b",
            rf"\b(?:write|give\s+me|use|compose)\s+(?:exactly\s+)?{N}\s+sentences?\b",
        ],
        _count("sent"),
    ),
    *_rules(
        [
            rf"\b{_EXACT}\s+{N}\s+paragraphs?\b",
            rf"\b{N}\s+paragraphs?\s+(?:exactly|long)\b",
            rf"\b(?:write|give\s+me|use|compose)\s+(?:exactly\s+)?{N}\s+paragraphs?\b",
        ],
        _count("para"),
    ),
    *_rules(
        [
            rf"\b(?:exactly\s+)?{N}\s+(?:bullet\s+points?|bullets|bulleted\s+(?:items|points|lines))\b",
            rf"\bbullet(?:ed)?\s+(?:point\s+)?list\s+(?:of|with)\s+(?:exactly\s+)?{N}\s+"
            rf"(?:items|points|entries|lines)\b",
            rf"\b{N}-(?:item|point)\s+bullet(?:ed)?\s+list\b",
        ],
        _count("bullet"),
    ),
    *_rules(
        [
            rf"\bnumber\s+the\s+(?:items|points|steps)\s+starting\s+(?:from|at|with)\s+{N}",
            rf"\bstart\s+the\s+numbered\s+list\s+(?:at|from|with)\s+{N}",
            rf"\bnumbered\s+list\s+whose\s+first\s+item\s+is\s+(?:number\s+)?{N}",
        ],
        lambda m: [{"type": "numbered_start", "k": _n(m)}],
    ),
    *_rules(
        [
            rf"\bnumbered\s+list\s+(?:of|with)\s+(?:exactly\s+)?{N}\s+\w+",
            rf"\b(?:exactly\s+)?{N}\s+numbered\s+(?:items|points|steps|entries|lines)\b",
            rf"\b{N}-(?:item|step|point)\s+numbered\s+list\b",
        ],
        _count("numbered"),
    ),
    *_rules(
        [
            rf"\btable\s+(?:with|of|containing|that\s+has)\s+(?:exactly\s+)?{N}\s+(?:data\s+)?rows\b",
            rf"\b{N}-row\s+(?:markdown\s+)?table\b",
            rf"\btable\s+with\s+a\s+header\s+row\s+and\s+(?:exactly\s+)?{N}\s+(?:data\s+)?rows\b",
        ],
        _count("table_rows"),
    ),
    *_rules(
        [
            r"\b(?:all|only|entirely|completely|exclusively|in)\s+(?:in\s+)?lower\s*case(?:\s+letters)?\b",
            r"\b(?:no|without(?:\s+any)?|(?:do\s+not|don['’]t|never)\s+use\s+any)\s+"
            r"(?:capital|upper\s*case)\s+letters\b",
        ],
        _fixed({"type": "is_lower"}),
    ),
    *_rules(
        [
            r"\b(?:all|only|entirely|completely|exclusively|in)\s+(?:in\s+)?(?:capital\s+letters"
            r"|capitals|upper\s*case(?:\s+letters)?|caps)\b"
        ],
        _fixed({"type": "is_upper"}),
    ),
]


def extract_specs(message: str) -> list[Spec]:
    """The checker specs of every verifiable constraint stated in `message`, in reading order.

    >>> extract_specs("Describe the sea in exactly forty words and do not use the letter e.")
    [{'type': 'word_eq', 'n': 40}, {'type': 'no_char', 'char': 'e'}]
    """
    used: list[tuple[int, int]] = []
    found: list[tuple[int, Spec]] = []
    lowered = message.lower()
    for rule in RULES:
        if rule.requires and rule.requires not in lowered:
            continue
        for match in rule.pattern.finditer(message):
            start, end = match.span()
            if any(start < u_end and u_start < end for u_start, u_end in used):
                continue
            specs = rule.build(match)
            if not specs:
                continue
            used.append((start, end))
            found.extend((start, spec) for spec in specs)
    unique: list[Spec] = []
    for _, spec in sorted(found, key=lambda item: item[0]):
        if spec not in unique:
            unique.append(spec)
    return unique


def describe(spec: Spec) -> str:
    """A short human label for a spec, as the checklist shows it ("exactly 40 words")."""
    kind = spec["type"]
    n = spec.get("n")

    def plural(noun: str) -> str:
        return f"{n} {noun}" if n == 1 else f"{n} {noun}s"

    labels: dict[str, Callable[[], str]] = {
        "word_eq": lambda: f"exactly {plural('word')}",
        "word_min": lambda: f"at least {plural('word')}",
        "word_max": lambda: f"at most {plural('word')}",
        "word_band": lambda: f"between {spec['lo']} and {spec['hi']} words",
        "word_times": lambda: f"the word “{spec['word']}” exactly {plural('time')}",
        "sent": lambda: f"exactly {plural('sentence')}",
        "sent_min": lambda: f"at least {plural('sentence')}",
        "sent_max": lambda: f"at most {plural('sentence')}",
        "para": lambda: f"exactly {plural('paragraph')}",
        "contains": lambda: f"includes “{spec['text']}” (same case)",
        "contains_norm": lambda: f"includes “{spec['text']}”",
        "no_word": lambda: f"never the word “{spec['word']}”",
        "no_char": lambda: f"no “{spec['char']}” anywhere",
        "startswith": lambda: f"starts with “{spec['text']}”",
        "endswith": lambda: f"ends with “{spec['text']}”",
        "bullet": lambda: f"exactly {plural('bullet point')}",
        "numbered": lambda: f"a numbered list of {plural('item')}",
        "numbered_start": lambda: f"a numbered list starting at {spec['k']}",
        "table_rows": lambda: f"a table with {plural('data row')}",
        "json_keys": lambda: "a JSON object with keys " + ", ".join(spec["keys"]),
        "json_keys_any": lambda: "a JSON object with one of the keys " + ", ".join(spec["keys"]),
        "json_array_len": lambda: f"a JSON array of {plural('element')}",
        "is_upper": lambda: "all in capital letters",
        "is_lower": lambda: "all in lower case",
        "char_max": lambda: f"at most {plural('character')}",
    }
    return labels[kind]() if kind in labels else kind
