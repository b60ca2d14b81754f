"""What verify-and-revise tells the model after a failed check: one actionable sentence per check.

Every number and quoted text comes from the checker's own measurement (`CheckResult.detail`, the
structured twin of its `reason`) and from the constraint itself; nothing is re-measured here,
so the request can never disagree with the verdict. A check type without a phrasing here (the
EV4 types) falls back to the checker's reason sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rsi_hub.checker import CheckResult

Spec = Mapping[str, Any]

# The counted noun (plural) and what tells the model how it is counted.
_COUNT_NOUNS: dict[str, tuple[str, str]] = {
    "word_eq": ("words", ""),
    "word_min": ("words", ""),
    "word_max": ("words", ""),
    "word_band": ("words", ""),
    "sent": ("sentences", ""),
    "sent_min": ("sentences", ""),
    "sent_max": ("sentences", ""),
    "para": ("paragraphs", " (separated by one blank line)"),
    "bullet": ("bullet points", ' (lines starting with "- ")'),
    "numbered": ("numbered items", ' (lines starting with "1.", "2.", …)'),
    "table_rows": ("data rows", " in its Markdown table (not counting header and separator)"),
    "json_array_len": ("elements", " in its JSON array"),
    "char_max": ("characters", ""),
}


def _plural(n: int, noun: str) -> str:
    """`_plural(1, "bullet points")` -> "1 bullet point"; `noun` is given in the plural."""
    if n != 1:
        return f"{n} {noun}"
    return f"1 {noun[:-1] if noun.endswith('s') else noun}"


def _quote(text: str) -> str:
    return f"“{text}”"


def _count(spec: Spec, result: CheckResult) -> str:
    """Count checks: how many there are, what the request asks for, how many to add or cut."""
    detail = result.detail or {}
    kind, got, delta = spec["type"], detail["got"], detail["delta"]
    noun, how = _COUNT_NOUNS[kind]
    if kind == "word_band":
        asked = f"between {spec['lo']} and {spec['hi']}"
    elif kind in ("word_min", "sent_min"):
        asked = f"at least {spec['n']}"
    elif kind in ("word_max", "sent_max", "char_max"):
        asked = f"at most {spec['n']}"
    else:
        asked = f"exactly {spec['n']}"
    # Exact targets need exactly |delta| more or fewer; bounds need at least that many.
    at_least = "" if asked.startswith("exactly") else "at least "
    change = "Add" if delta < 0 else "Remove"
    return (
        f"Your answer has {_plural(got, noun)}{how}; the request asks for {asked}. "
        f"{change} {at_least}{_plural(abs(delta), noun)}."
    )


def _word_times(spec: Spec, result: CheckResult) -> str:
    got, n = (result.detail or {})["got"], spec["n"]
    change = "Use it" if got < n else "Remove"
    howmany = _plural(abs(got - n), "more times" if got < n else "occurrences")
    times = _plural(got, "times")
    return (
        f"The word {_quote(spec['word'])} appears {times} in your answer; the request asks for "
        f"exactly {_plural(n, 'times')}. {change} {howmany}."
    )


def _no_word(spec: Spec, result: CheckResult) -> str:
    got = (result.detail or {})["got"]
    return (
        f"Your answer uses the word {_quote(spec['word'])} {_plural(got, 'times')}; the request "
        "forbids it. Rewrite those sentences without it."
    )


def _no_char(spec: Spec, result: CheckResult) -> str:
    got = (result.detail or {})["got"]
    char = spec["char"]
    case = "" if spec.get("case_sensitive") or not char.isalpha() else " (either case)"
    return (
        f"Your answer contains {_quote(char)}{case} {_plural(got, 'times')}; the request forbids "
        "it anywhere. Replace every word that has it."
    )


def _contains(spec: Spec, result: CheckResult) -> str:
    case = " with exactly this capitalisation" if spec["type"] == "contains" else ""
    return f"Your answer does not contain {_quote(spec['text'])}; include it word for word{case}."


def _edge(spec: Spec, result: CheckResult) -> str:
    found = (result.detail or {})["found"]
    where = "start" if spec["type"] == "startswith" else "end"
    return (
        f"Your answer {where}s with {_quote(found)}; it must {where} with exactly "
        f"{_quote(spec['text'])}."
    )


def _numbered_start(spec: Spec, result: CheckResult) -> str:
    numbers = (result.detail or {})["numbers"]
    found = f"starts at {numbers[0]}" if numbers else "has no numbered item"
    return f"Your numbered list {found}; its first item must be numbered {spec['k']}."


def _keys(keys: Sequence[str]) -> str:
    return ", ".join(_quote(k) for k in keys)


def _json_keys(spec: Spec, result: CheckResult) -> str:
    detail = result.detail or {}
    if "json_error" in detail:
        return (
            f"Your answer holds no valid JSON ({detail['json_error']}); reply with one JSON "
            f"object that has the keys {_keys(spec['keys'])}."
        )
    if spec["type"] == "json_keys_any":
        return (
            f"Your JSON object has the keys {_keys(detail['keys']) or 'none'}; it must have at "
            f"least one of {_keys(spec['keys'])}."
        )
    return (
        f"Your JSON object lacks the key(s) {_keys(detail['missing'])}; it must have the keys "
        f"{_keys(spec['keys'])}."
    )


def _case(spec: Spec, result: CheckResult) -> str:
    got = (result.detail or {})["got"]
    if spec["type"] == "is_upper":
        return (
            f"Your answer has {_plural(got, 'lower-case letters')}; write all of it in capital "
            "letters."
        )
    return f"Your answer has {_plural(got, 'capital letters')}; write all of it in lower case."


_PHRASINGS: dict[str, Callable[[Spec, CheckResult], str]] = {
    **dict.fromkeys(_COUNT_NOUNS, _count),
    "word_times": _word_times,
    "no_word": _no_word,
    "no_char": _no_char,
    "contains": _contains,
    "contains_norm": _contains,
    "startswith": _edge,
    "endswith": _edge,
    "numbered_start": _numbered_start,
    "json_keys": _json_keys,
    "json_keys_any": _json_keys,
    "is_upper": _case,
    "is_lower": _case,
}


def explain(spec: Spec, result: CheckResult) -> str:
    """One sentence telling the model what is wrong with its answer and how to fix it.

    >>> from rsi_hub.checker import check
    >>> spec = {"type": "word_eq", "n": 50}
    >>> explain(spec, check("word " * 48, [spec]).results[0])
    'Your answer has 48 words; the request asks for exactly 50. Add 2 words.'
    """
    phrase = _PHRASINGS.get(spec["type"])
    if phrase is not None:
        try:
            return phrase(spec, result)
        except (KeyError, IndexError, TypeError):
            pass  # a measurement this phrasing does not know (e.g. no JSON): the checker's words
    return f"Your answer fails the {spec['type']} check: {result.reason}."


def revision_request(failures: Sequence[tuple[Spec, CheckResult]]) -> str:
    """The user turn that asks for a revision, listing every failed check's explanation."""
    lines = "\n".join(f"- {explain(spec, result)}" for spec, result in failures)
    return (
        "Your answer does not meet every requirement of my request:\n"
        f"{lines}\n"
        "Rewrite your answer so that it meets all of the requirements. Reply with the revised "
        "answer only."
    )
