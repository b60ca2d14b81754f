"""Answering one message through `transformers.pipeline` and judging the reply (the main job)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rsi_hub.space_support.checklist import ChecklistItem, checklist_for, format_checklist
from rsi_hub.space_support.generation import require_model_folder


@dataclass(frozen=True)
class Answer:
    """A reply and the checklist of the constraints its message stated."""

    message: str
    reply: str
    checklist: list[ChecklistItem]

    @property
    def passed(self) -> bool:
        """Whether every stated constraint is met (false when none was found)."""
        return bool(self.checklist) and all(item.passed for item in self.checklist)


def answer_with_checklist(
    model: str | Path,
    message: str,
    *,
    max_new_tokens: int = 256,
    log: Callable[[str], None] = print,
) -> Answer:
    """Load `model` with `transformers.pipeline` as a user would, answer `message`, judge it.

    Prints (through `log`) the reply and the checklist of the constraints stated in `message`,
    each judged by `rsi_hub.checker`.

    Args:
        model: a model folder (a run or a staged release) or a Hub repository id.
        message: the user's message; constraints are found in it by the rule-based extractor.
        max_new_tokens: reply length limit (greedy decoding, stops on `<|im_end|>` or `</s>`).
        log: receives the printed lines.
    """
    from transformers import pipeline

    require_model_folder(model)
    chat = pipeline("text-generation", model=str(model))
    result = chat([{"role": "user", "content": message}], max_new_tokens=max_new_tokens)
    reply = result[0]["generated_text"][-1]["content"]
    checklist = checklist_for(message, reply)
    log(f"reply: {reply}")
    log(format_checklist(checklist, markdown=False))
    return Answer(message, reply, checklist)
