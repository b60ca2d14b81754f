"""Converters from the row shapes of the card's sources to ChatML messages or preference rows.

Every converter returns plain `{"role", "content"}` dicts with string content, or `None` for a
row that is well-formed but unusable (an empty answer, an unknown role, no assistant turn);
prep counts those. A row whose *shape* is not recognised at all raises `DataSourceError`, since
that means the wrong file or the wrong source name, not a bad row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rsi_hub.errors import DataSourceError

Message = dict[str, str]
Row = Mapping[str, Any]

ROLES = ("system", "user", "assistant")
# ShareGPT-style speaker names (magpie, openthoughts) mapped to ChatML roles.
_SPEAKERS = {
    "system": "system",
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "model": "assistant",
}
# Column names that hold an answer next to a `prompt` column, in order of preference.
_ANSWER_COLUMNS = ("response", "completion", "answer", "output", "solution")

SHAPES_HELP = (
    "`messages` (list of {role, content}), `conversations` (list of {from, value}), "
    "`prompt` + one of `response`/`completion`/`answer`/`output`, `problem` + `solution`, "
    "or `instruction` + `output`; an optional `system` column is prepended"
)


class UnrecognisedRow(DataSourceError):
    """A row has none of the supported shapes."""


@dataclass(frozen=True)
class PreferenceRow:
    """One preference pair: the shared prompt conversation and the two answers (plain text)."""

    prompt: list[Message]
    chosen: str
    rejected: str


def _text(content: Any) -> str | None:
    # OpenAI-style content parts: keep the text parts, in order.
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        ]
        return "".join(parts)
    return None


def _message(role: Any, content: Any) -> Message | None:
    text = _text(content)
    if role not in ROLES or text is None:
        return None
    return {"role": role, "content": text}


def _from_messages(items: Any) -> list[Message] | None:
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if not isinstance(item, Mapping):
            return None
        message = _message(item.get("role"), item.get("content"))
        if message is None:
            return None
        out.append(message)
    return out


def _from_conversations(items: Any) -> list[Message] | None:
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if not isinstance(item, Mapping):
            return None
        role = _SPEAKERS.get(str(item.get("from", item.get("role", ""))).lower())
        message = _message(role, item.get("value", item.get("content")))
        if message is None:
            return None
        out.append(message)
    return out


def _prompt_messages(prompt: Any) -> list[Message] | None:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return _from_messages(prompt)


def _with_system(messages: list[Message], row: Row) -> list[Message]:
    system = row.get("system")
    if (
        isinstance(system, str)
        and system.strip()
        and (not messages or messages[0]["role"] != "system")
    ):
        return [{"role": "system", "content": system}, *messages]
    return messages


def _is_usable(messages: list[Message]) -> bool:
    # Every turn has text, system only first, and at least one assistant answer to supervise.
    if not messages or not any(m["role"] == "assistant" for m in messages):
        return False
    if any(m["role"] == "system" for m in messages[1:]):
        return False
    return all(m["content"].strip() for m in messages if m["role"] != "system")


def to_messages(row: Row) -> list[Message] | None:
    """Convert one SFT row of any supported shape to ChatML messages.

    Returns:
        The messages, or `None` when the row is well-formed but unusable (no assistant turn,
        an empty turn, an unknown role).

    Raises:
        UnrecognisedRow: the row has none of the supported shapes (see `SHAPES_HELP`).
    """
    if "messages" in row:
        messages = _from_messages(row["messages"])
    elif "conversations" in row:
        messages = _from_conversations(row["conversations"])
    elif "prompt" in row and any(col in row for col in _ANSWER_COLUMNS):
        answer = next(row[col] for col in _ANSWER_COLUMNS if col in row)
        prompt = _prompt_messages(row["prompt"])
        reply = _text(answer)
        messages = None if prompt is None or reply is None else [*prompt, _assistant(reply)]
    elif "problem" in row and "solution" in row:
        messages = _pair(row["problem"], row["solution"])
    elif "instruction" in row and "output" in row:
        instruction = row["instruction"]
        extra = row.get("input")
        if isinstance(instruction, str) and isinstance(extra, str) and extra.strip():
            instruction = f"{instruction}\n\n{extra}"
        messages = _pair(instruction, row["output"])
    else:
        raise UnrecognisedRow(
            f"row with columns {sorted(row)} has none of the shapes {SHAPES_HELP}"
        )
    if messages is None:
        return None
    messages = _with_system(messages, row)
    return messages if _is_usable(messages) else None


def _assistant(text: str) -> Message:
    return {"role": "assistant", "content": text}


def _pair(prompt: Any, answer: Any) -> list[Message] | None:
    if not isinstance(prompt, str) or not isinstance(answer, str):
        return None
    return [{"role": "user", "content": prompt}, _assistant(answer)]


def _split_answer(value: Any) -> tuple[list[Message] | None, str | None]:
    # A chosen/rejected column is either the answer text or the whole conversation ending in it.
    if isinstance(value, str):
        return None, value
    messages = _from_messages(value)
    if not messages or messages[-1]["role"] != "assistant":
        return None, None
    return messages[:-1], messages[-1]["content"]


def to_preference(row: Row) -> PreferenceRow | None:
    """Convert one preference row (`prompt`, `chosen`, `rejected`) to a `PreferenceRow`.

    `chosen`/`rejected` may be answer strings or conversations ending in the answer (the
    `ultrafeedback_binarized` shape); the conversations must share their prompt turns.

    Raises:
        UnrecognisedRow: the row lacks `chosen` or `rejected`.
    """
    if "chosen" not in row or "rejected" not in row:
        raise UnrecognisedRow(
            f"preference row with columns {sorted(row)} needs `chosen` and `rejected` "
            "(strings or conversations) and a `prompt` unless the conversations carry it"
        )
    chosen_prompt, chosen = _split_answer(row["chosen"])
    rejected_prompt, rejected = _split_answer(row["rejected"])
    if chosen is None or rejected is None or not chosen.strip() or not rejected.strip():
        return None
    if chosen_prompt and rejected_prompt and chosen_prompt != rejected_prompt:
        return None
    prompt = chosen_prompt or rejected_prompt or _prompt_messages(row.get("prompt"))
    if not prompt or prompt[-1]["role"] != "user":
        return None
    prompt = _with_system(prompt, row)
    return PreferenceRow(prompt=prompt, chosen=chosen, rejected=rejected)


SftConverter = Callable[[Row], list[Message] | None]
PreferenceConverter = Callable[[Row], PreferenceRow | None]
