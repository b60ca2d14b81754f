"""PREF: held-out preference pairs, yielded as (prompt messages, chosen, rejected).

Default source: the `test_prefs` split of `HuggingFaceH4/ultrafeedback_binarized`, the held-out
side of the SimPO data (card §4d), through `datasets.load_dataset`. Any local JSONL of the same
schema works, and so does the shipped demo (`load_pref("pref_demo")`).

Row schema: `prompt` is a string or a list of messages; `chosen` and `rejected` are message
lists, either the whole conversation (UltraFeedback: the user turn, then the answer) or just the
answer, or plain strings. The answer is the last message, which must be the assistant's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from rsi_hub.errors import PrefSourceError
from rsi_hub.suites.files import data_dir, file_name

DEFAULT_SOURCE = "HuggingFaceH4/ultrafeedback_binarized"
DEFAULT_SPLIT = "test_prefs"
Message = dict[str, str]


class PrefPair(NamedTuple):
    """One preference pair: the conversation so far, the preferred and the rejected answer."""

    prompt: list[Message]
    chosen: str
    rejected: str


def load_pref(
    source: str | os.PathLike[str] | None = None, split: str = DEFAULT_SPLIT
) -> Iterator[PrefPair]:
    """Preference pairs from the Hub (default), a local JSONL file, or the demo ("pref_demo").

    The source is opened before this returns, so a missing file or an unreachable Hub fails
    here, at once, with a `PrefSourceError` that says what to pass instead.
    """
    if source is None:
        return _from_hub(DEFAULT_SOURCE, split)
    text = os.fspath(source)
    if text == "pref_demo":
        return _from_jsonl(data_dir() / file_name("pref_demo"))
    path = Path(text)
    if path.exists():
        return _from_jsonl(path)
    # A Hub id is "owner/name"; anything else that does not exist is a missing local file.
    if text.endswith((".jsonl", ".json")) or text.startswith((".", "/")) or text.count("/") != 1:
        raise PrefSourceError(f"no such preference file: {path}")
    return _from_hub(text, split)


def _offline() -> bool:
    return any(
        os.environ.get(var, "").strip().lower() in {"1", "true", "yes", "on"}
        for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def _from_hub(name: str, split: str) -> Iterator[PrefPair]:
    hint = (
        "pass a local JSONL with `prompt`, `chosen` and `rejected` (message lists), e.g. "
        "load_pref('path/to/prefs.jsonl') or the shipped demo load_pref('pref_demo')"
    )
    try:
        import datasets  # heavy: imported only for the Hub source
    except ImportError as err:
        raise PrefSourceError(f"loading {name} needs the `datasets` package; or {hint}") from err
    try:
        rows = datasets.load_dataset(name, split=split)
    except Exception as err:  # any failure means the same to the caller: use a local file
        mode = "offline mode is on (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE) and it is not cached"
        why = mode if _offline() else f"{type(err).__name__}: {err}"
        raise PrefSourceError(
            f"cannot load {name} split {split!r}: {why}. Instead, {hint}."
        ) from err
    return _pairs(rows, f"{name}[{split}]")


def _from_jsonl(path: Path) -> Iterator[PrefPair]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise PrefSourceError(f"cannot read preference file {path}: {err}") from err
    rows = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, json.loads(line)))
        except json.JSONDecodeError as err:
            raise PrefSourceError(f"{path}:{lineno}: not valid JSON ({err.msg})") from err
    if not rows:
        raise PrefSourceError(f"{path}: no preference pairs")
    return iter([to_pair(row, f"{path}:{lineno}") for lineno, row in rows])


def _pairs(rows: Iterable[Mapping[str, Any]], where: str) -> Iterator[PrefPair]:
    for i, row in enumerate(rows):
        yield to_pair(row, f"{where} row {i}")


def _messages(value: Any, where: str, field: str) -> list[Message]:
    if isinstance(value, str):
        return [{"role": "assistant" if field != "prompt" else "user", "content": value}]
    if not isinstance(value, list) or not value:
        raise PrefSourceError(f"{where}: field '{field}': expected a non-empty message list")
    out = []
    for m in value:
        if (
            not isinstance(m, Mapping)
            or not isinstance(m.get("role"), str)
            or not isinstance(m.get("content"), str)
        ):
            raise PrefSourceError(
                f"{where}: field '{field}': each message needs string role and content"
            )
        out.append({"role": m["role"], "content": m["content"]})
    return out


def to_pair(row: Mapping[str, Any], where: str = "row") -> PrefPair:
    """One schema row as a `PrefPair`; raises `PrefSourceError` naming the row and field."""
    if not isinstance(row, Mapping):
        raise PrefSourceError(f"{where}: expected a JSON object")
    for field in ("prompt", "chosen", "rejected"):
        if field not in row:
            raise PrefSourceError(f"{where}: field '{field}': missing")
    prompt = _messages(row["prompt"], where, "prompt")
    chosen = _messages(row["chosen"], where, "chosen")
    rejected = _messages(row["rejected"], where, "rejected")
    for field, conv in (("chosen", chosen), ("rejected", rejected)):
        if conv[-1]["role"] != "assistant":
            raise PrefSourceError(
                f"{where}: field '{field}': the last message must be the assistant's"
            )
    if len(chosen) > 1 and len(rejected) > 1 and chosen[:-1] != rejected[:-1]:
        raise PrefSourceError(f"{where}: 'chosen' and 'rejected' continue different conversations")
    context = chosen[:-1] if len(chosen) > 1 else prompt
    return PrefPair(context, chosen[-1]["content"], rejected[-1]["content"])
