"""Numbers in English words, both ways: the one number-word table of the package.

The suite generator writes numbers as words (`number_words(40)` -> "forty") and the Space reads
them back from what users type (`parse_number("forty-two")` -> 42, also `1,000` and `a dozen`).
Both use the tables here, so what one writes the other reads.
"""

from __future__ import annotations

import re

UNITS: tuple[str, ...] = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)  # fmt: skip
TENS: tuple[str, ...] = (
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
)  # fmt: skip

_UNITS = {word: value for value, word in enumerate(UNITS)}
_TENS = {word: 10 * value for value, word in enumerate(TENS) if word}
_TENS["fourty"] = 40  # a common misspelling, read as meant (never written)
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


def number_words(n: int) -> str:
    """English words for 0 <= n < 1000: 40 -> "forty", 125 -> "one hundred and twenty-five"."""
    if not 0 <= n < 1000:
        raise ValueError(f"number_words supports 0..999, got {n}")
    if n < 20:
        return UNITS[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return TENS[tens] + (f"-{UNITS[ones]}" if ones else "")
    hundreds, rest = divmod(n, 100)
    head = f"{UNITS[hundreds]} hundred"
    return head if rest == 0 else f"{head} and {number_words(rest)}"
