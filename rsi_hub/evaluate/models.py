"""lm-eval model classes for `rsi-hub eval`: lm-eval's HF and vLLM models plus three fixes.

1. They record how every answer ended (`genfacts`), which lm-eval's text-only interface hides.
2. Log-likelihoods score the answer only. lm-eval moves a context's trailing white space into
   the continuation (right for plain-text prompts, where " Paris" should be one token); after a
   chat template's generation prompt `<|im_start|>assistant\n` that newline belongs to the
   prompt, which the served model always sees, so it stays there. Otherwise every PREF answer
   (and MMLU letter) would carry log p("\n" | "...assistant") and one extra token.
3. HF only: a run directory's `generation_config.json` sets `max_new_tokens` 2048 (the serving
   contract), and transformers lets that win over the `max_length` lm-eval passes, so a task's
   `max_gen_toks` would be ignored. The model class clears the default so that lm-eval's limit
   is the one in force (2048 when served, the same number).

How the facts reach the task: lm-eval generates a batch, decodes each row and then calls
`cache_hook.add_partial("generate_until", (context, gen_kwargs), text)` once per row, in row
order. The classes compute the facts of every row as the batch comes back from
`_model_generate`, queue them, and pair each with its context in that hook; after the whole
`generate_until` call they file them under each request's document.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from lm_eval.models.huggingface import HFLM

from rsi_hub.evaluate import genfacts
from rsi_hub.evaluate.genfacts import GenerationFacts
from rsi_hub.evaluate.protocol import GENERATION_PROMPT


class _FactsHook:
    """Wraps lm-eval's cache hook: pairs queued facts with the context of each decoded row."""

    def __init__(self, inner: Any, owner: _ServedMixin) -> None:
        self.inner = inner
        self.owner = owner

    def add_partial(self, attr: str, req: Any, res: Any) -> None:
        if attr == "generate_until" and self.owner._pending:
            self.owner._by_context[req[0]] = self.owner._pending.popleft()
        self.inner.add_partial(attr, req, res)


class _ServedMixin:
    """What the HF and vLLM classes share: answer-only scoring and the facts bookkeeping."""

    _pending: deque[GenerationFacts]
    _by_context: dict[str, GenerationFacts]

    def _init_facts(self) -> None:
        self._pending = deque()
        self._by_context = {}
        self.set_cache_hook(self.cache_hook)  # type: ignore[attr-defined]

    def set_cache_hook(self, cache_hook: Any) -> None:
        # CachingLM installs its own hook later; keep ours around whatever is installed.
        inner = cache_hook.inner if isinstance(cache_hook, _FactsHook) else cache_hook
        self.cache_hook = _FactsHook(inner, self)

    def _encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        if not context.endswith(GENERATION_PROMPT):
            return super()._encode_pair(context, continuation)  # type: ignore[misc]
        whole = self.tok_encode(context + continuation)  # type: ignore[attr-defined]
        prompt = self.tok_encode(context)  # type: ignore[attr-defined]
        return prompt, whole[len(prompt) :]

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        self._pending.clear()
        self._by_context.clear()
        genfacts.clear()
        answers = super().generate_until(requests, disable_tqdm)  # type: ignore[misc]
        for request in requests:
            facts = self._by_context.get(request.args[0])
            if facts is not None:
                genfacts.record(request.doc, facts)
        return answers


class RsiHFLM(_ServedMixin, HFLM):
    """lm-eval's `hf` model: records how each answer ended, scores answers without the
    generation prompt's newline, and honours `max_gen_toks` (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The run's generation_config says max_new_tokens 2048; lm-eval's max_length must rule.
        self.model.generation_config.max_new_tokens = None
        self._init_facts()

    def _model_generate(self, context: Any, max_length: int, stop: list[str], **kwargs: Any) -> Any:
        output = super()._model_generate(context, max_length, stop, **kwargs)
        prompt_len = context.shape[1]
        max_new = max_length - prompt_len
        for row in output[:, prompt_len:].tolist():
            self._pending.append(genfacts.facts_from_token_ids(row, max_new))
        return output


def facts_from_vllm_completion(completion: Any) -> GenerationFacts:
    """Facts of one vLLM `CompletionOutput` (its `token_ids` and `finish_reason`).

    vLLM keeps a stop token id at the end of `token_ids` and drops a matched stop string.
    """
    ids = list(completion.token_ids)
    if completion.finish_reason == "length":
        return GenerationFacts(len(ids), "length")
    # Not the limit, so either a stop id ends `ids` or a stop string ended the answer.
    return genfacts.facts_from_token_ids(ids, max_new_tokens=len(ids) + 1)


def make_vllm_lm(**model_args: Any) -> Any:
    """lm-eval's `vllm` model recording how each answer ended; imports vLLM only when called."""
    from lm_eval.models.vllm_causallms import VLLM

    class RsiVLLM(_ServedMixin, VLLM):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._init_facts()

        def _model_generate(
            self,
            requests: list[list[int]],
            generate: bool = False,
            sampling_params: Any = None,
        ) -> Any:
            outputs = super()._model_generate(requests, generate, sampling_params)
            if generate:
                for output in outputs:
                    self._pending.append(facts_from_vllm_completion(output.outputs[0]))
            return outputs

    return RsiVLLM(**model_args)
