"""Prompts of the generation pool as synth sees them, and the conversations built from them.

Three conversations exist per prompt: the scaffolded one lensyn generates from (scaffold system
message + user prompt), the served one rft generates from (k0 + user prompt, exactly as served),
and the training row that is kept (k0 + user prompt + the bare final answer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rsi_hub.chat import load_system_prompt, templates_dir
from rsi_hub.errors import RsiHubError

SCAFFOLD_FILE = "lensyn_scaffold.txt"
Message = dict[str, Any]
PromptId = str | int


@dataclass(frozen=True)
class PoolPrompt:
    """One generation-pool prompt: its pool id, the user text and the checker constraints."""

    id: PromptId
    prompt: str
    checks: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PoolPrompt:
        """Build from a suite record: `id`, `prompt` (or `user`/`text`) and `checks` keys."""
        text = next((record[k] for k in ("prompt", "user", "text") if k in record), None)
        if "id" not in record or not isinstance(text, str):
            raise RsiHubError(
                f"pool record {dict(record)!r:.120} needs an `id` and a string `prompt`."
            )
        checks = record.get("checks") or record.get("constraints") or ()
        return cls(id=record["id"], prompt=text, checks=tuple(dict(c) for c in checks))


def as_pool_prompts(records: Iterable[PoolPrompt | Mapping[str, Any] | Any]) -> list[PoolPrompt]:
    """Normalise suite items (our dataclass, dicts, or objects with id/prompt/checks) to ours."""
    out: list[PoolPrompt] = []
    for record in records:
        if isinstance(record, PoolPrompt):
            out.append(record)
        elif isinstance(record, Mapping):
            out.append(PoolPrompt.from_record(record))
        else:
            # The suites package may hand out its own dataclass: read it by attribute.
            out.append(PoolPrompt.from_record(vars(record) if hasattr(record, "__dict__") else {}))
    return out


@lru_cache(maxsize=1)
def load_scaffold() -> str:
    """The lensyn scaffold system message (`templates/lensyn_scaffold.txt`), verbatim."""
    path = templates_dir() / SCAFFOLD_FILE
    if not path.is_file():
        raise RsiHubError(f"{path} not found: the lensyn scaffold ships in templates/.")
    return path.read_text(encoding="utf-8")


def scaffold_messages(prompt: PoolPrompt) -> list[Message]:
    """The lensyn generation conversation: the scaffold replaces k0 as the system message."""
    return [
        {"role": "system", "content": load_scaffold()},
        {"role": "user", "content": prompt.prompt},
    ]


def served_messages(prompt: PoolPrompt) -> list[Message]:
    """The served conversation (k0 + user), used by rft and as the prompt of every RL rollout."""
    return [
        {"role": "system", "content": load_system_prompt()},
        {"role": "user", "content": prompt.prompt},
    ]


def training_messages(prompt: PoolPrompt, answer: str) -> list[Message]:
    """The kept SFT row (card section 2): system k0, the user prompt and the bare final answer."""
    return [*served_messages(prompt), {"role": "assistant", "content": answer}]
