"""The prompt generator: a writing task, constraints drawn to be jointly feasible, phrased.

`make_prompt(rng, group, types)` builds one prompt carrying exactly one check of each type in
`types`. Parameters are drawn in dependency order (texts before the words that must avoid
them, sentence counts before word counts) and each draw is kept only if `feasibility.problems`
finds nothing wrong with the checks so far.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from rsi_hub.errors import RsiHubError
from rsi_hub.suites import phrasings as ph
from rsi_hub.suites import tasks
from rsi_hub.suites.feasibility import (
    SENTENCE_TYPES,
    STRUCTURAL_TYPES,
    TERMINATORS,
    fixed_words,
    problems,
    required_texts,
    structural_min_words,
)
from rsi_hub.suites.rng import Rng

Check = dict[str, Any]

_FORMAT_OF_TYPE = {
    "bullet": tasks.LIST,
    "numbered": tasks.LIST,
    "numbered_start": tasks.STEPS,
    "table_rows": tasks.TABLE,
    "json_keys": tasks.JSON_OBJECT,
    "json_keys_any": tasks.JSON_ANY,
    "json_array_len": tasks.JSON_ARRAY,
}
# Order in which parameters are drawn: later draws must avoid what earlier ones require.
_DRAW_ORDER: tuple[str, ...] = (
    "is_upper", "is_lower", "startswith", "endswith", "contains", "contains_norm",
    "word_times", "no_word", "no_char", "para", "sent", "sent_min", "sent_max",
    "word_eq", "word_max", "word_min", "word_band", "char_max",
)  # fmt: skip
_DRAW_TRIES = 40
P_SUMMARY = 0.12  # share of prose prompts that summarise a passage


class GenerationError(RsiHubError):
    """No feasible parameters were found for a prompt's check types (the caller retries)."""


@dataclass(frozen=True)
class Generated:
    """One generated prompt: its text, its checks (in the order stated) and its category."""

    prompt: str
    checks: list[Check]
    category: str


def make_prompt(rng: Rng, group: str, types: Collection[str]) -> Generated:
    """A prompt from `group`'s subjects carrying one check of each type in `types`."""
    types = set(types)
    unknown = types - set(_DRAW_ORDER) - STRUCTURAL_TYPES
    if unknown:
        raise GenerationError(f"the generator cannot make checks of type {sorted(unknown)}")
    structural = [t for t in types if t in STRUCTURAL_TYPES]
    slots = tasks.SlotFiller(rng, group)
    checks: list[Check] = []
    if structural:
        kind, head = _structural(structural[0], rng, slots)
        checks.append(head)
        template = rng.choice(kind.templates)
        if kind.fmt == tasks.JSON_OBJECT:
            keys = tasks.JSON_SCHEMAS[kind.templates.index(template)]
            head["keys"] = list(keys[: rng.randint(2, 4)])
        task = slots.fill(template)
    elif rng.chance(P_SUMMARY):
        kind = tasks.SUMMARY
        task = slots.fill(rng.choice(kind.templates)) + "\n\n" + tasks.passage(slots, rng)
    else:
        kind = rng.choice(tasks.PROSE_KINDS)
        task = slots.fill(rng.choice(kind.templates))

    for name in _DRAW_ORDER:
        if name in types:
            checks.append(_draw(name, rng, checks, types))
    phrases = [phrase(c, rng) for c in checks]
    head_phrases, rest = (phrases[:1], phrases[1:]) if structural else ([], phrases)
    order = list(range(len(rest)))
    rng.shuffle(order)
    ordered_checks = checks[: len(head_phrases)] + [checks[len(head_phrases) + i] for i in order]
    ordered_phrases = head_phrases + [rest[i] for i in order]
    return Generated(_assemble(task, ordered_phrases, rng), ordered_checks, kind.name)


def _structural(name: str, rng: Rng, slots: tasks.SlotFiller) -> tuple[tasks.TaskKind, Check]:
    kind = tasks.STRUCTURED_KINDS[_FORMAT_OF_TYPE[name]]
    if name == "bullet":
        return kind, {"type": name, "n": rng.randint(3, 7)}
    if name == "numbered":
        return kind, {"type": name, "n": rng.randint(3, 9)}
    if name == "numbered_start":
        k = rng.randint(3, 8)
        slots.values["prev"] = ph.render_number(k - 1, rng)
        return kind, {"type": name, "k": k}
    if name == "table_rows":
        slots.values["col_a"], slots.values["col_b"] = rng.choice(tasks.TABLE_COLUMNS)
        return kind, {"type": name, "n": rng.randint(2, 7)}
    if name == "json_keys":
        return kind, {"type": name, "keys": []}  # keys follow the template's schema
    if name == "json_keys_any":
        keys = rng.choice(tasks.JSON_ANY_KEYS)
        return kind, {"type": name, "keys": list(keys[: rng.randint(2, 3)])}
    return kind, {"type": name, "n": rng.randint(2, 6)}  # json_array_len


def _draw(name: str, rng: Rng, checks: list[Check], types: set[str]) -> Check:
    for _ in range(_DRAW_TRIES):
        candidate = _candidate(name, rng, checks, types)
        if not problems([*checks, candidate]):
            return candidate
    raise GenerationError(f"no feasible {name} for {checks}")


def _cased(text: str, types: set[str]) -> str:
    if "is_upper" in types:
        return text.upper()
    if "is_lower" in types:
        return text.lower()
    return text


def _round_up(n: int, step: int) -> int:
    return -(-n // step) * step


def _sentences(checks: list[Check]) -> int:
    """The sentence count the responder will aim for (what word counts must fit)."""
    for c in checks:
        if c["type"] in {"sent", "sent_min"}:
            return int(c["n"])
        if c["type"] == "sent_max":
            return min(3, int(c["n"]))
    paras = [int(c["n"]) for c in checks if c["type"] == "para"]
    return max([3, *paras])


def _candidate(name: str, rng: Rng, checks: list[Check], types: set[str]) -> Check:
    structural = any(c["type"] in STRUCTURAL_TYPES for c in checks)
    if name in {"is_upper", "is_lower"}:
        return {"type": name}
    if name == "startswith":
        return {"type": name, "text": _cased(rng.choice(ph.STARTS), types)}
    if name == "endswith":
        ends = ph.ENDS
        if types & SENTENCE_TYPES:
            ends = tuple(e for e in ends if e[-1] in TERMINATORS)
        return {"type": name, "text": _cased(rng.choice(ends), types)}
    if name == "contains":
        return {"type": name, "text": _cased(rng.choice(ph.CASED_TEXTS), types)}
    if name == "contains_norm":
        return {"type": name, "text": rng.choice(ph.PHRASES)}
    if name == "word_times":
        n = rng.weighted((1, 2, 3, 4, 5), (2, 4, 4, 2, 1))
        return {"type": name, "word": rng.choice(ph.COUNT_WORDS), "n": n}
    if name == "no_word":
        return {"type": name, "word": rng.choice(ph.BANNED_WORDS)}
    if name == "no_char":
        pool = ph.LETTERS if rng.chance(0.55) else tuple(ph.MARKS)
        return {"type": name, "char": rng.choice(pool)}
    if name == "para":
        return {"type": name, "n": rng.randint(2, 4)}
    paras = [int(c["n"]) for c in checks if c["type"] == "para"]
    floor = paras[0] if paras else 1
    if name == "sent":
        n = rng.weighted(range(1, 9), (10, 18, 22, 18, 13, 9, 5, 5))
        return {"type": name, "n": max(n, floor + rng.below(3) if paras else n)}
    if name == "sent_min":
        return {"type": name, "n": max(floor, rng.randint(2, 5))}
    if name == "sent_max":
        return {"type": name, "n": max(floor, rng.randint(2, 8))}
    # Length checks: sized from the fixed words and the sentence count already drawn.
    s = _sentences(checks)
    minimum = structural_min_words(checks) if structural else fixed_words(checks) + s
    if name == "word_eq":
        lo = max(minimum + 2, 7 * s, 12)
        n = rng.randint(lo, max(lo + 5, 16 * s))
        if rng.chance(0.6):
            n = _round_up(n, 5)
        return {"type": name, "n": n}
    if name == "word_max":
        lo = minimum + rng.randint(10, 40) if structural else max(minimum + 8, 10 * s)
        n = lo if structural else rng.randint(lo, lo + 12 * s + 40)
        return {"type": name, "n": _round_up(n, 10 if rng.chance(0.7) else 5)}
    if name == "word_min":
        n = rng.randint(max(minimum, 15), 120)
        return {"type": name, "n": _round_up(n, 10) if rng.chance(0.6) else n}
    if name == "word_band":
        lo = _round_up(rng.randint(max(minimum + 2, 20), 110), 5)
        return {"type": name, "lo": lo, "hi": lo + rng.choice((10, 15, 20, 30, 40))}
    if name == "char_max":
        need = sum(len(t) + 1 for t in required_texts(checks)) + 13 * max(minimum, 1)
        return {"type": name, "n": _round_up(need + rng.randint(40, 300), 50)}
    raise GenerationError(f"the generator cannot make {name} checks")


def phrasing_key(check: Check) -> str:
    """The PHRASINGS entry that says `check`: its type, but no_char splits into letters and marks."""
    if check["type"] == "no_char":
        return "no_letter" if str(check["char"]).isalpha() else "no_mark"
    return str(check["type"])


def phrase(check: Check, rng: Rng, template: str | None = None) -> str:
    """One natural-language rendering of a check: `template` (one of `phrasing_key(check)`'s
    PHRASINGS), or one drawn with `rng`, which also draws how numbers are written."""
    t = check["type"]
    values: dict[str, str] = {}
    if "n" in check:
        values["n"] = ph.render_number(int(check["n"]), rng)
        unit = "sentence" if t in SENTENCE_TYPES else ""
        values["noun"] = unit + ("" if check["n"] == 1 else "s")
    if t == "numbered_start":
        values["n"] = ph.render_number(int(check["k"]), rng)
        values["k"] = str(check["k"])
    if t == "word_band":
        values["lo"], values["hi"] = str(check["lo"]), str(check["hi"])
    if t == "word_times":
        values["times"] = ph.render_times(int(check["n"]), rng)
    if "word" in check:
        values["w"] = str(check["word"])
    if "text" in check:
        values["text"] = str(check["text"])
    if t in {"json_keys", "json_keys_any"}:
        values["keys"] = ph.quote_list(list(check["keys"]), "and" if t == "json_keys" else "or")
    if t == "no_char":
        char = str(check["char"])
        if char.isalpha():
            values["c"], values["C"] = char, char.upper()
        else:
            values["plural"], values["singular"] = ph.MARKS[char]
    text = (template or rng.choice(ph.PHRASINGS[phrasing_key(check)])).format(**values)
    if "text" in check and str(check["text"])[-1:] in TERMINATORS:
        # 'End with "See you soon!".' reads badly: the quoted text already ends the sentence.
        text = text.replace(f'"{check["text"]}".', f'"{check["text"]}"')
    return text


def _assemble(task: str, phrases: list[str], rng: Rng) -> str:
    """Task and constraints in one of three layouts people use when writing requests."""
    if not phrases:
        return task
    style = rng.weighted(("inline", "paragraph", "requirements"), (0.55, 0.25, 0.2))
    if style == "inline" and "\n" not in task:
        return f"{task} {' '.join(phrases)}"
    if style == "requirements":
        return f"{task}\n\nRequirements:\n" + "\n".join(f"- {p}" for p in phrases)
    return f"{task}\n\n{' '.join(phrases)}"
