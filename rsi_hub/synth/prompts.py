"""The conversations synth builds from a generation-pool prompt (`rsi_hub.suites.PoolPrompt`).

Three conversations exist per prompt: the scaffolded one lensyn generates from (scaffold system
message + user prompt), the served one rft generates from (k0 + user prompt, exactly as served),
and the training row that is kept (k0 + user prompt + the bare final answer).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from rsi_hub.chat import served_messages, templates_dir
from rsi_hub.errors import SynthFileError
from rsi_hub.suites.prompts import PoolPrompt

SCAFFOLD_FILE = "lensyn_scaffold.txt"
Message = dict[str, Any]


@lru_cache(maxsize=1)
def load_scaffold() -> str:
    """The lensyn scaffold system message (`templates/lensyn_scaffold.txt`), verbatim."""
    path = templates_dir() / SCAFFOLD_FILE
    if not path.is_file():
        raise SynthFileError(
            f"{path} not found: the lensyn scaffold ships in templates/.", path=path
        )
    return path.read_text(encoding="utf-8")


def scaffold_messages(prompt: PoolPrompt) -> list[Message]:
    """The lensyn generation conversation: the scaffold replaces k0 as the system message."""
    return [
        {"role": "system", "content": load_scaffold()},
        {"role": "user", "content": prompt.prompt},
    ]


def training_messages(prompt: PoolPrompt, answer: str) -> list[Message]:
    """The kept SFT row (card section 2): system k0, the user prompt and the bare final answer."""
    return [*served_messages(prompt.prompt), {"role": "assistant", "content": answer}]
