"""Numbers as people write them in requests: `40`, `1,000`, `forty`, `forty-two`, `a dozen`."""

from __future__ import annotations

import re

_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fourty": 40,  # a common misspelling, read as meant
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1000}
_PHRASES = {"a dozen": 12, "a single": 1, "a hundred": 100, "a thousand": 1000}

_WORD = "|".join(sorted([*_UNITS, *_TENS, *_SCALES], key=len, reverse=True))
# One number: digits (with thousands commas), a fixed phrase, or a run of number words joined by
# spaces, hyphens or "and" ("one hundred and five"). Bounded repetition: no backtracking blow-up.
NUMBER_PATTERN = (
    r"(?:\d{1,3}(?:,\d{3})+|\d+"
    rf"|{'|'.join(_PHRASES)}"
    rf"|(?:{_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_WORD})){{0,6}})\b"
)
_NUMBER_RE = re.compile(rf"^{NUMBER_PATTERN}$", re.IGNORECASE)


def parse_number(text: str) -> int | None:
    """The integer `text` spells, or None.

    >>> parse_number("forty-two"), parse_number("1,000"), parse_number("one hundred and five")
    (42, 1000, 105)
    """
    text = text.strip().lower()
    if not _NUMBER_RE.match(text):
        return None
    if text[0].isdigit():
        return int(text.replace(",", ""))
    if text in _PHRASES:
        return _PHRASES[text]
    total = current = 0
    for word in re.split(r"[\s-]+", text):
        if word == "and":
            continue
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        else:  # thousand
            total += max(current, 1) * 1000
            current = 0
    return total + current
