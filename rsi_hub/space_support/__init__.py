"""What the Gradio Space (`space/app.py`) and the main job share.

- `extract_specs(message)`: the verifiable constraints a message states, as checker specs.
- `checklist_for(message, reply)` / `format_checklist(items)`: those constraints judged on a
  reply by `rsi_hub.checker` (the one checker).
- `rounds_message(rounds, kept=…)`: the checklist of a verify-and-revise answer, every round.
- `load_chat_model`, `stream_reply`: greedy streaming in the served configuration.
- `answer_with_checklist(model, message)`: load with `pipeline`, answer, print the checklist.

Uses `rsi_hub.chat`, `rsi_hub.checker` and `rsi_hub.serving` (the extractor, verify-and-revise).
Generation imports torch and transformers
lazily, so the extractor and the checklist stay cheap to import.
"""

from rsi_hub.serving.constraints import describe, extract_specs
from rsi_hub.space_support.answer import Answer, answer_with_checklist
from rsi_hub.space_support.checklist import (
    CHECKLIST_TITLE,
    ChecklistItem,
    checklist_for,
    checklist_message,
    format_checklist,
    format_rounds,
    items_from_verdict,
    judge,
    rounds_message,
)
from rsi_hub.space_support.generation import (
    ChatModel,
    InputTooLongError,
    load_chat_model,
    require_model_folder,
    stream_reply,
)

__all__ = [
    "CHECKLIST_TITLE",
    "Answer",
    "ChatModel",
    "ChecklistItem",
    "InputTooLongError",
    "answer_with_checklist",
    "checklist_for",
    "checklist_message",
    "describe",
    "extract_specs",
    "format_checklist",
    "format_rounds",
    "items_from_verdict",
    "judge",
    "load_chat_model",
    "require_model_folder",
    "rounds_message",
    "stream_reply",
]
