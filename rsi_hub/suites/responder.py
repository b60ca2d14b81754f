"""A rule-based reference responder: writes, for any suite row, a response passing its checks.

It exists to prove every generated prompt satisfiable (a test runs it over every row of every
suite) and to give demos a known-good answer. It reads only the row's checks (plus the column
names a table prompt asks for), never the checker, so a pass is evidence and not a tautology.
The prose is plain filler: correctness of the constraints is the point, not style.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rsi_hub.suites.feasibility import (
    LIST_ITEMS_STEPS,
    TERMINATORS,
    filler_without,
    fmt_of,
    has_char,
    has_word,
    sentence_bounds,
    word_bounds,
)
from rsi_hub.suites.phrasings import FILLER_CLAUSES
from rsi_hub.suites.rng import stable_hash

_TABLE_COLUMNS = re.compile(r'columns (?:are )?"([^"]+)" and "([^"]+)"')
_NATURAL_WORDS_PER_SENTENCE = 9


@dataclass
class _Spec:
    """The row's checks, gathered by role."""

    checks: Sequence[Mapping[str, Any]]
    fmt: str = "prose"
    start: str = ""
    end: str = ""
    texts: list[str] = field(default_factory=list)
    counted: list[tuple[str, int]] = field(default_factory=list)
    banned_words: list[str] = field(default_factory=list)
    banned_chars: list[tuple[str, bool]] = field(default_factory=list)
    case: str = ""
    para: int = 1
    char_max: int | None = None

    @classmethod
    def of(cls, checks: Sequence[Mapping[str, Any]]) -> _Spec:
        spec = cls(checks=checks, fmt=fmt_of(checks))
        for c in checks:
            t = c["type"]
            if t == "startswith":
                spec.start = str(c["text"])
            elif t == "endswith":
                spec.end = str(c["text"])
            elif t in {"contains", "contains_norm"}:
                spec.texts.append(str(c["text"]))
            elif t == "word_times":
                spec.counted.append((str(c["word"]), int(c["n"])))
            elif t == "no_word":
                spec.banned_words.append(str(c["word"]))
            elif t == "no_char":
                spec.banned_chars.append((str(c["char"]), bool(c.get("case_sensitive", False))))
            elif t in {"is_upper", "is_lower"}:
                spec.case = t
            elif t == "para":
                spec.para = int(c["n"])
            elif t == "char_max":
                spec.char_max = int(c["n"])
        return spec

    def extras(self) -> list[list[str]]:
        """Token groups that must appear somewhere: required phrases, then counted words."""
        groups = [text.split() for text in self.texts]
        for word, n in self.counted:
            groups += [word.split() for _ in range(n)]
        return groups


class _Filler:
    """An endless stream of safe filler words; each take starts at a clause boundary."""

    def __init__(self, spec: _Spec, seed: int) -> None:
        allowed = set(filler_without(spec.banned_chars))
        self.clauses = [
            kept
            for clause in FILLER_CLAUSES
            if (kept := [w for w in clause.split() if w in allowed])
        ]
        self.pos = seed % len(self.clauses)

    def clause_lengths(self, k: int) -> list[int]:
        """Lengths of the next k clauses, without consuming them."""
        return [len(self.clauses[(self.pos + i) % len(self.clauses)]) for i in range(k)]

    def take(self, n: int | None) -> list[str]:
        """The next n words (None: the next whole clause), starting at a clause boundary."""
        if n is None:
            n = self.clause_lengths(1)[0]
        out: list[str] = []
        while len(out) < n:
            out += self.clauses[self.pos % len(self.clauses)]
            self.pos += 1
        return out[:n]


def reference_response(prompt_row: Mapping[str, Any], *, filler_start: int | None = None) -> str:
    """A response that passes every check of `prompt_row` (a suite row).

    Rows with a hand-written `reference` (EV4) return it; generated rows are answered by rule.

    Args:
        prompt_row: the row (`prompt`, `checks`).
        filler_start: the filler clause the answer's prose starts from. None (the suites' own
            reference answers): a hash of the prompt, so that answers to different prompts read
            differently. A fixed clause (the teacher's `--teacher-filler fixed`) makes every
            answer's filler the same stream, so a model imitating it can tell from the words it
            has written how many sentences or words it has written.
    """
    if prompt_row.get("reference") is not None:
        return str(prompt_row["reference"])
    checks = prompt_row["checks"]
    spec = _Spec.of(checks)
    start = stable_hash(prompt_row.get("prompt", "")) if filler_start is None else filler_start
    filler = _Filler(spec, start)
    if spec.fmt == "prose":
        text = _prose(spec, filler)
    elif spec.fmt in {"json_keys", "json_keys_any", "json_array_len"}:
        text = _fit(spec, lambda m: _json(spec, filler, m))
    elif spec.fmt == "table_rows":
        header = _table_header(spec, str(prompt_row.get("prompt", "")), filler)
        text = _fit(spec, lambda m: _table(spec, filler, m, header))
    else:
        text = _fit(spec, lambda m: _list(spec, filler, m))
    if spec.case == "is_upper":
        text = text.upper()
    elif spec.case == "is_lower":
        text = text.lower()
    return text


def _fit(spec: _Spec, build: Any) -> str:
    """The longest items (whole clauses, else 4 words down to 1) within the word limit."""
    _lo, hi = word_bounds(spec.checks)
    text = ""
    for size in (None, 4, 3, 2, 1):
        text = build(size)
        if len(text.split()) <= hi:
            return text
    return text


def _mix(filler_words: list[str], groups: list[list[str]]) -> list[str]:
    """Filler with the token groups spread evenly through it, never before the first word.

    Keeping a filler word first lets the caller capitalise it without touching a required
    phrase, whose case may matter.
    """
    out = list(filler_words)
    for j in reversed(range(len(groups))):
        at = max(1, (j + 1) * len(filler_words) // (len(groups) + 1)) if filler_words else 0
        out[at:at] = groups[j]
    return out


def _items(spec: _Spec, filler: _Filler, count: int, size: int | None) -> list[list[str]]:
    """`count` items of `size` filler words (None: a clause), with required words dealt in."""
    items = [filler.take(size) for _ in range(count)]
    for i, group in enumerate(spec.extras()):
        items[i % count].extend(group)
    return items


def _list(spec: _Spec, filler: _Filler, size: int | None) -> str:
    params = next(c for c in spec.checks if c["type"] == spec.fmt)
    count = LIST_ITEMS_STEPS if spec.fmt == "numbered_start" else int(params["n"])
    first = int(params["k"]) if spec.fmt == "numbered_start" else 1
    marker = "-" if not any(has_char("-", c, cs) for c, cs in spec.banned_chars) else "*"
    lines = []
    for i, item in enumerate(_items(spec, filler, count, size)):
        item[0] = item[0].capitalize() if item[0].islower() else item[0]
        head = marker if spec.fmt == "bullet" else f"{first + i}."
        lines.append(f"{head} {' '.join(item)}")
    return "\n".join(lines)


def _table_header(spec: _Spec, prompt: str, filler: _Filler) -> tuple[str, str]:
    found = _TABLE_COLUMNS.search(prompt)
    columns = list(found.groups()) if found else ["Item", "Details"]
    for i, col in enumerate(columns):
        unsafe = any(has_char(col, c, cs) for c, cs in spec.banned_chars) or any(
            has_word(col, w) for w in spec.banned_words + [w for w, _ in spec.counted]
        )
        if unsafe:
            columns[i] = filler.take(1)[0].capitalize()
    return columns[0], columns[1]


def _table(spec: _Spec, filler: _Filler, size: int | None, header: tuple[str, str]) -> str:
    params = next(c for c in spec.checks if c["type"] == "table_rows")
    rows = int(params["n"])
    cell_size = None if size is None else max(1, size // 2)
    firsts = _items(spec, filler, rows, cell_size)
    lines = [f"| {header[0]} | {header[1]} |", "|---|---|"]
    for first in firsts:
        lines.append(f"| {' '.join(first)} | {' '.join(filler.take(cell_size))} |")
    return "\n".join(lines)


def _json(spec: _Spec, filler: _Filler, size: int | None) -> str:
    params = next(c for c in spec.checks if c["type"] == spec.fmt)
    if spec.fmt == "json_array_len":
        values = [" ".join(item) for item in _items(spec, filler, int(params["n"]), size)]
        return json.dumps(values, ensure_ascii=False)
    keys = list(params["keys"]) if spec.fmt == "json_keys" else [params["keys"][0]]
    values = [" ".join(item) for item in _items(spec, filler, len(keys), size)]
    return json.dumps(dict(zip(keys, values, strict=True)), ensure_ascii=False)


def _prose(spec: _Spec, filler: _Filler) -> str:
    """Sentences of filler around the fixed texts, sized to every count asked for."""
    checks = spec.checks
    s_lo, s_hi = sentence_bounds(checks)
    w_lo, w_hi = word_bounds(checks)
    start, end = spec.start.split(), spec.end.split()
    extras = spec.extras()
    fixed = len(start) + len(end) + sum(len(g) for g in extras)

    sentences = max(s_lo, spec.para, int(min(s_hi, 3)))
    while sentences > max(s_lo, spec.para) and fixed + sentences > w_hi:
        sentences -= 1
    end_alone = bool(end) and spec.end[-1] in TERMINATORS and sentences >= 2
    free = list(range(sentences - 1 if end_alone else sentences))

    # Which fixed tokens go in which sentence; required phrases and counted words are dealt
    # round the free sentences so no sentence holds them all.
    groups: list[list[list[str]]] = [[] for _ in range(sentences)]
    for i, group in enumerate(extras):
        groups[free[(i + 1) % len(free)]].append(group)
    has_fixed = [bool(groups[i]) for i in range(sentences)]
    has_fixed[0] = has_fixed[0] or bool(start)
    has_fixed[-1] = has_fixed[-1] or bool(end)

    need = [0 if has_fixed[i] else 1 for i in range(sentences)]  # a sentence needs a word
    clauses = filler.clause_lengths(len(free))
    if spec.char_max is None and w_lo <= fixed + sum(clauses) <= w_hi:
        # No exact length asked: every free sentence is one whole filler clause, which reads
        # far better than clauses cut at arbitrary word counts.
        for i, length in zip(free, clauses, strict=True):
            need[i] = length
        return _paragraphs(_sentences(spec, filler, need, groups, end_alone), spec.para)
    if spec.char_max is not None:
        target = max(w_lo, fixed + sum(need))
    else:
        natural = fixed + _NATURAL_WORDS_PER_SENTENCE * len(free)
        target = int(min(max(natural, w_lo, fixed + sum(need)), w_hi))
    spare = target - fixed - sum(need)
    for i in free:  # prefer one filler word in every free sentence, for readability
        if spare > 0 and need[i] == 0:
            need[i], spare = 1, spare - 1
    for j in range(spare):
        need[free[j % len(free)]] += 1

    return _paragraphs(_sentences(spec, filler, need, groups, end_alone), spec.para)


def _sentences(
    spec: _Spec,
    filler: _Filler,
    need: list[int],
    groups: list[list[list[str]]],
    end_alone: bool,
) -> list[str]:
    """Render each sentence: opening, filler mixed with its fixed groups, closing, terminator."""
    start, end = spec.start.split(), spec.end.split()
    sentences = len(need)
    parts = []
    for i in range(sentences):
        words = _mix(filler.take(need[i]), groups[i])
        if words and need[i] and words[0].islower() and not (i == 0 and start):
            words[0] = words[0].capitalize()
        tokens = (start if i == 0 else []) + words
        ends_here = i == sentences - 1 and bool(end)
        if ends_here and not end_alone:
            tokens += end
        elif ends_here:
            tokens = end
        if not ends_here:
            tokens[-1] += "."
        parts.append(" ".join(tokens))
    return parts


def _paragraphs(sentences: list[str], count: int) -> str:
    base, extra = divmod(len(sentences), count)
    out, i = [], 0
    for p in range(count):
        size = base + (1 if p < extra else 0)
        out.append(" ".join(sentences[i : i + size]))
        i += size
    return "\n\n".join(out)
