"""`transformers serve` with the card's 8,192-token input limit: `python -m` this module.

transformers 5.x's server has no maximum input length: the tokenizer's `model_max_length` (8192
in a run's `tokenizer_config.json`) only logs "Token indices sequence length is longer than the
specified maximum", and generation runs on, so an over-long conversation would be answered
silently off-contract. No option of `transformers serve` sets a limit, so this module runs the
engine's own command-line application unchanged (same arguments: `serve MODEL --host ...`) with
one addition: before `/v1/chat/completions` or `/v1/completions` generates, the prompt is
tokenized exactly as the engine will tokenize it (the same tokenizer, `apply_chat_template` with
the server's and the request's `chat_template_kwargs`), and a prompt over 8,192 tokens is
refused with HTTP 400 and an OpenAI-style error naming both counts. Nothing else is changed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rsi_hub.chat import MAX_INPUT_TOKENS

LIMITED_PATHS = ("/v1/chat/completions", "/v1/completions")


def over_limit_message(tokens: int, limit: int = MAX_INPUT_TOKENS) -> str:
    """The error a client gets for a prompt of `tokens` tokens (more than `limit`)."""
    return (
        f"the prompt has {tokens} tokens, more than this model's maximum input of {limit} "
        "tokens; shorten the conversation."
    )


class _PromptCounter:
    """Counts a request's prompt tokens as the engine's handlers will render them."""

    def __init__(self, model_id: str, chat_template_kwargs: dict[str, Any]) -> None:
        self.model_id = model_id
        self.chat_template_kwargs = chat_template_kwargs
        self._tokenizer: Any = None

    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(self.model_id)
        return self._tokenizer

    def count(self, path: str, body: dict[str, Any]) -> int | None:
        """Prompt tokens of a request body, or None when it is not one this guard reads."""
        from transformers.cli.serving.utils import BaseHandler, Modality

        tokenizer = self.tokenizer()
        if path == "/v1/completions":
            prompt = body.get("prompt")
            return len(tokenizer(prompt).input_ids) if isinstance(prompt, str) else None
        messages = body.get("messages")
        if not isinstance(messages, list):
            return None
        kwargs = {**self.chat_template_kwargs, **(body.get("chat_template_kwargs") or {})}
        ids = tokenizer.apply_chat_template(
            BaseHandler.get_processor_inputs_from_messages(messages, Modality.LLM),
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
            **kwargs,
        )
        return len(ids)


def _install_input_limit() -> None:
    """Wrap the engine's `build_server` so that every app it builds refuses over-long prompts."""
    from fastapi.responses import JSONResponse
    from transformers.cli.serving import server

    build_server = server.build_server

    def limited_build_server(model_manager: Any, chat_handler: Any, **kwargs: Any) -> Any:
        app = build_server(model_manager, chat_handler, **kwargs)
        if model_manager.force_model is None:  # rsi-hub serve always pins one model
            return app
        counter = _PromptCounter(model_manager.force_model, dict(chat_handler.chat_template_kwargs))

        @app.middleware("http")
        async def limit_input(request: Any, call_next: Any) -> Any:
            if request.method == "POST" and request.url.path in LIMITED_PATHS:
                try:
                    body = json.loads(await request.body())
                except ValueError:
                    body = None  # the engine answers malformed JSON itself
                tokens = counter.count(request.url.path, body) if isinstance(body, dict) else None
                if tokens is not None and tokens > MAX_INPUT_TOKENS:
                    error = {
                        "message": over_limit_message(tokens),
                        "type": "invalid_request_error",
                        "param": "messages",
                        "code": "context_length_exceeded",
                    }
                    return JSONResponse({"error": error}, status_code=400)
            return await call_next(request)

        return app

    server.build_server = limited_build_server


def main(argv: list[str] | None = None) -> None:
    """Run `transformers ARGV...` (e.g. `serve MODEL --port N`) with the input limit installed."""
    from transformers.cli.transformers import app

    _install_input_limit()
    app(args=list(sys.argv[1:] if argv is None else argv), prog_name="transformers")


if __name__ == "__main__":
    main()
