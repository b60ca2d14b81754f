"""`rsi-hub eval --endpoint URL`: scoring a live OpenAI-compatible server through lm-eval.

lm-eval's `local-chat-completions` model sends each document as chat messages (the user message,
no system message: the server's chat template inserts k0, as `rsi-hub serve` configures it) with
the task's generation settings (temperature 0, `<|im_end|>` as stop, the token limit). rsi-hub's
subclass adds one field: `chat_template_kwargs`, the per-suite system-prompt switch, so that
IF263 is scored without any system message (`use_default_system_prompt: false`), exactly as the
hf backend's run-wide `chat_template_args` do.

Only generation suites can be scored this way: chat completions carry no log-likelihoods.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from rsi_hub.chat import IM_END_TOKEN
from rsi_hub.errors import EvaluationError, EvaluationInputError

PROBE_TIMEOUT_S = 10
SERVE_HINT = "start one with `rsi-hub serve RUN --port N` or check the URL"


def normalise_endpoint(url: str) -> str:
    """The base URL ending in `/v1` (a trailing slash or `/chat/completions` is dropped)."""
    base = url.rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        base = base.removesuffix(suffix)
    if not base.startswith(("http://", "https://")):
        raise EvaluationInputError(
            f"--endpoint {url!r}: give the server's base URL, e.g. http://127.0.0.1:8000/v1.",
            field="endpoint",
        )
    return base


def served_models(base_url: str) -> list[str]:
    """The model ids `GET BASE/models` lists.

    Raises:
        EvaluationError: the endpoint does not answer, or not as an OpenAI-compatible server.
    """
    url = f"{base_url}/models"
    try:
        with urllib.request.urlopen(url, timeout=PROBE_TIMEOUT_S) as response:
            listing = json.loads(response.read())
    except urllib.error.HTTPError as err:
        raise EvaluationError(
            f"--endpoint {base_url}: GET /models answered HTTP {err.code}; it is not an "
            f"OpenAI-compatible server's /v1 base URL ({SERVE_HINT}).",
            field="endpoint",
        ) from err
    except (OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        raise EvaluationError(
            f"--endpoint {base_url}: no server answers ({reason}); {SERVE_HINT}.",
            field="endpoint",
        ) from err
    data = listing.get("data") if isinstance(listing, dict) else None
    ids = [m.get("id") for m in data or [] if isinstance(m, dict) and isinstance(m.get("id"), str)]
    if not ids:
        raise EvaluationError(
            f"--endpoint {base_url}: GET /models lists no model; {SERVE_HINT}.", field="endpoint"
        )
    return ids


def resolve_model_id(base_url: str, requested: str | None) -> str:
    """The model id to send: `requested` when the server lists it, else the only one it serves.

    Raises:
        EvaluationError: the endpoint is down, does not serve `requested`, or serves several
            models and none was named.
    """
    ids = served_models(base_url)
    if requested is not None:
        if requested not in ids:
            raise EvaluationError(
                f"--endpoint-model {requested!r}: {base_url} does not serve it; it serves "
                f"{', '.join(ids)} (pass one of those, or omit --endpoint-model).",
                field="endpoint_model",
            )
        return requested
    if len(ids) > 1:
        raise EvaluationError(
            f"--endpoint {base_url} serves several models ({', '.join(ids)}); name one with "
            "--endpoint-model.",
            field="endpoint_model",
        )
    return ids[0]


def endpoint_model_args(base_url: str, model_id: str, *, max_gen_toks: int) -> dict[str, Any]:
    """Arguments of lm-eval's `local-chat-completions` model for a served run."""
    return {
        "model": model_id,
        "base_url": f"{base_url}/chat/completions",
        "tokenizer_backend": None,  # the server renders and tokenizes
        "tokenized_requests": False,
        "eos_string": IM_END_TOKEN,  # the stop lm-eval adds to the task's own (the same one)
        "num_concurrent": 1,
        "max_retries": 1,
        "max_gen_toks": max_gen_toks,
        "timeout": 3600,  # one answer of 2,048 tokens on a CPU server
    }


def make_endpoint_lm(**model_args: Any) -> Any:
    """lm-eval's `local-chat-completions` model sending rsi-hub's system-prompt switch."""
    from lm_eval.models.openai_completions import LocalChatCompletion

    class RsiEndpointLM(LocalChatCompletion):
        """Sends `chat_template_kwargs` (set per suite by the runner) with every request."""

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.chat_template_args: dict[str, Any] = {"use_default_system_prompt": True}

        def _create_payload(self, messages: list[dict], **kwargs: Any) -> dict:
            payload = super()._create_payload(messages, **kwargs)
            payload["chat_template_kwargs"] = dict(self.chat_template_args)
            return payload

    return RsiEndpointLM(**model_args)
