"""The README's main job on the embedded default, step by step with progress output."""

from __future__ import annotations

from pathlib import Path

from rsi_hub.chat import render, validate_model_folder
from rsi_hub.tiny import build_tiny


def _step(text: str) -> None:
    print(f"==> {text}", flush=True)


def run_demo(out: str | Path, *, message: str, max_new_tokens: int = 32) -> str:
    """Build the tiny checkpoint into `out`, answer `message` through `pipeline`; return the reply."""
    from transformers import pipeline

    out = Path(out)
    _step(f"building the tiny nemotron_h checkpoint in {out}")
    build_tiny(out, force=True)
    validate_model_folder(out)
    _step("loading it with transformers.pipeline('text-generation')")
    chat = pipeline("text-generation", model=str(out))
    messages = [{"role": "user", "content": message}]
    _step("rendered prompt (served template, k0 inserted)")
    print(render(messages))
    _step(f"reply (greedy, at most {max_new_tokens} new tokens, stops on <|im_end|> or </s>)")
    result = chat(messages, max_new_tokens=max_new_tokens)
    reply = result[0]["generated_text"][-1]["content"]
    print(reply)
    return reply
