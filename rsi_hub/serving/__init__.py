"""Serving: what runs around a served model; uses `rsi_hub.chat` and `rsi_hub.checker` only.

- `rsi-hub serve`'s launchers for the engines people deploy (`transformers serve`, `vllm serve`):
  `engine_command` builds the exact command in the card's served configuration, `exec_engine`
  runs it; nothing here is a server of its own.
- `revise(generate, messages, checks=None, max_rounds=K)`: verify-and-revise (answer, judge with
  the checker, ask again with its reasons, keep the best answer); `ReviseResult`, `Round`.
- `LocalGenerator` (in-process, transformers) and `OpenAIGenerator` (any OpenAI-compatible
  endpoint): the `generate` callables it takes; `Generation` is what they return.
- `extract_specs(message)` / `describe(spec)`: the verifiable constraints a message states, as
  checker specs (the Space's checklist uses the same extractor).
- `explain(spec, result)`: the actionable sentence a failed check becomes in a revision request.
"""

from rsi_hub.serving.constraints import describe, extract_specs
from rsi_hub.serving.feedback import explain, revision_request
from rsi_hub.serving.generators import LocalGenerator, OpenAIGenerator
from rsi_hub.serving.launch import ENGINES, EngineCommand, engine_command, exec_engine
from rsi_hub.serving.revise import Generate, Generation, ReviseResult, Round, revise

__all__ = [
    "ENGINES",
    "EngineCommand",
    "Generate",
    "Generation",
    "LocalGenerator",
    "OpenAIGenerator",
    "ReviseResult",
    "Round",
    "describe",
    "engine_command",
    "exec_engine",
    "explain",
    "extract_specs",
    "revise",
    "revision_request",
]
