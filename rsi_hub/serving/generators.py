"""`Generate` adapters for verify-and-revise: in-process through transformers, or any
OpenAI-compatible endpoint (`transformers serve`, `vllm serve`) through the `openai` client.

Both answer in the served configuration: the run's chat template (k0 when the conversation has
no system message, thinking off), greedy, stop at `<|im_end|>` / `</s>`, at most 8,192 input
tokens. torch, transformers and openai are imported when an adapter is built, not before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.chat import MAX_INPUT_TOKENS, MAX_NEW_TOKENS, STOP_TOKEN_IDS, render
from rsi_hub.errors import GenerationError
from rsi_hub.serving.revise import Generation, Message


@dataclass
class LocalGenerator:
    """Greedy answers from a model loaded in this process (a run directory or a staged release).

    Build it from a folder with `LocalGenerator.load(folder)`, or from a model and tokenizer
    already loaded (the Space's). Calling it answers one conversation.
    """

    model: Any
    tokenizer: Any
    max_new_tokens: int = MAX_NEW_TOKENS
    #: Insert k0 when the conversation has no system message (false: IF263's protocol).
    use_default_system_prompt: bool = True

    @classmethod
    def load(
        cls,
        folder: str | Path,
        *,
        max_new_tokens: int = MAX_NEW_TOKENS,
        device: str | None = None,
        use_default_system_prompt: bool = True,
    ) -> LocalGenerator:
        """Load `folder` with transformers (its own dtype; GPU when there is one)."""
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="auto").to(device).eval()
        return cls(model, tokenizer, max_new_tokens, use_default_system_prompt)

    def __call__(self, messages: list[Message]) -> Generation:
        """Answer `messages` greedily; the token counts are the model's own.

        Raises:
            GenerationError: the rendered conversation is over 8,192 tokens.
        """
        import torch

        # The served template: k0 unless a system message is given (or the protocol has none).
        prompt = render(messages, use_default_system_prompt=self.use_default_system_prompt)
        ids = self.tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"]
        if ids.shape[1] > MAX_INPUT_TOKENS:
            raise GenerationError(
                f"the conversation is {ids.shape[1]:,} tokens long, over the limit of "
                f"{MAX_INPUT_TOKENS:,} input tokens; shorten the request or use fewer rounds.",
                field="messages",
            )
        ids = ids.to(self.model.device)
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                eos_token_id=list(STOP_TOKEN_IDS),
                pad_token_id=self.tokenizer.pad_token_id,
            )
        new = out[0, ids.shape[1] :]
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        return Generation(text, int(ids.shape[1]), int(new.shape[0]))


@dataclass
class OpenAIGenerator:
    """Greedy answers from an OpenAI-compatible server (`rsi-hub serve`, `vllm serve`, …).

    Sends `temperature=0` (vLLM ignores `do_sample`) and thinking off; the server applies the
    model's chat template. The API key is read from `OPENAI_API_KEY` (a local server ignores
    it), never passed as an argument.

    Attributes:
        base_url: the server's `/v1` URL, e.g. `http://127.0.0.1:8000/v1`.
        model: the model id the server serves (`GET /v1/models`).
        max_tokens: the answer length limit.
        timeout: seconds per request.
    """

    base_url: str
    model: str
    max_tokens: int = MAX_NEW_TOKENS
    timeout: float = 600.0

    def __post_init__(self) -> None:
        try:
            import openai
        except ImportError as err:
            raise GenerationError(
                "talking to an endpoint needs the openai client: pip install 'rsi-hub[serve]'."
            ) from err
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
            timeout=self.timeout,
            max_retries=0,
        )

    def __call__(self, messages: list[Message]) -> Generation:
        """Answer `messages` through `/v1/chat/completions`.

        Raises:
            GenerationError: the server cannot be reached, does not serve `model`, or refuses
                the request; one line naming the URL and the fix.
        """
        openai = self._openai
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=0,
                max_tokens=self.max_tokens,
                extra_body={"chat_template_kwargs": {"enable_thinking": False}},
            )
        except openai.APIConnectionError as err:
            raise GenerationError(
                f"cannot reach {self.base_url}: is the server running? Start one with "
                "`rsi-hub serve RUN` and pass its /v1 URL.",
                field="base_url",
            ) from err
        except openai.NotFoundError as err:
            raise GenerationError(
                f"{self.base_url} does not serve model {self.model!r}: pass one of "
                f"{', '.join(self._served_models()) or 'the ids GET /v1/models lists'}.",
                field="model",
            ) from err
        except openai.APIStatusError as err:
            raise GenerationError(
                f"{self.base_url} refused the request ({err.status_code}): {err.message}",
                field="base_url",
            ) from err
        choice = response.choices[0]
        usage = response.usage
        return Generation(
            choice.message.content or "",
            int(usage.prompt_tokens) if usage else 0,
            int(usage.completion_tokens) if usage else 0,
        )

    def _served_models(self) -> list[str]:
        try:
            return [m.id for m in self._client.models.list()]
        except self._openai.OpenAIError:
            return []
