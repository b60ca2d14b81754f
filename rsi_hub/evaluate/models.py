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

Data parallelism (`rsi-hub eval --num-processes N`, HF only): lm-eval's own multi-process mode
does not serve these tasks. On CPU processes HFLM counts GPUs, finds none and leaves every rank
at world size 1, so each rank scores everything; on GPUs it splits the documents, but its merge
of the per-document metrics (`evaluator.evaluate`) walks only rank 0's metric keys, so an
IF suite's `miss_<type>` metrics, which each document reports only for the check types it
carries, raise KeyError or vanish when the ranks' documents carry different types. So
`RsiHFLM` tells lm-eval it is one model (rank 0 of 1, lm-eval's tensor-parallel convention:
every rank runs the whole loop, only LOCAL_RANK 0 gets results) and splits the *requests*
itself: each rank generates (or scores) every N-th request, and the answers, with their facts,
are gathered back in request order before lm-eval sees them. Every rank then holds exactly what
one process would have, and the documents, `doc_hash`es and metrics come out identical.
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


def _process_group(lm: Any) -> tuple[int, int] | None:
    """(rank, world size) of a multi-process launch HFLM joined; None for one process.

    HFLM keeps the `Accelerator` it built only when several processes were launched.
    """
    accelerator = getattr(lm, "accelerator", None)
    if accelerator is None or accelerator.num_processes <= 1:
        return None
    return accelerator.process_index, accelerator.num_processes


def interleave(shares: list[list[Any]], count: int) -> list[Any]:
    """Merge the results of requests `r::world` of each rank r back into request order."""
    merged: list[Any] = [None] * count
    for r, share in enumerate(shares):
        merged[r :: len(shares)] = share
    return merged


def _gather_in_request_order(mine: list[Any], count: int, world: int) -> list[Any]:
    """Every rank's results for its requests `rank::world`, on every rank, in request order."""
    import torch.distributed as dist

    shares: list[Any] = [None] * world
    dist.all_gather_object(shares, mine)
    return interleave(shares, count)


class RsiHFLM(_ServedMixin, HFLM):
    """lm-eval's `hf` model: records how each answer ended, scores answers without the
    generation prompt's newline, honours `max_gen_toks`, and runs data-parallel under
    `accelerate launch` (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The run's generation_config says max_new_tokens 2048; lm-eval's max_length must rule.
        self.model.generation_config.max_new_tokens = None
        self._init_facts()
        self.process_group = _process_group(self)
        self.requests_per_rank = [0] * (self.process_group or (0, 1))[1]

    def take_request_counts(self) -> list[int]:
        """Requests each rank ran since the last call (meta.json's evidence of the split)."""
        counts, self.requests_per_rank = self.requests_per_rank, [0] * len(self.requests_per_rank)
        return counts

    # lm-eval sees one model (see the module docstring); `process_group` is the real layout.
    @property
    def rank(self) -> int:
        return 0

    @property
    def world_size(self) -> int:
        return 1

    def _split(self, requests: list[Any], run: Any, disable_tqdm: bool) -> list[Any]:
        rank, world = self.process_group or (0, 1)
        for r in range(world):
            self.requests_per_rank[r] += len(requests[r::world])
        if world == 1:
            return run(requests, disable_tqdm)
        mine = requests[rank::world]
        results = run(mine, disable_tqdm or rank != 0) if mine else []
        return _gather_in_request_order(results, len(requests), world)

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        def generate(mine: list[Any], quiet: bool) -> list[tuple[str, GenerationFacts | None]]:
            answers = super(RsiHFLM, self).generate_until(mine, quiet)
            return [(a, genfacts.lookup(r.doc)) for a, r in zip(answers, mine, strict=True)]

        merged = self._split(requests, generate, disable_tqdm)
        genfacts.clear()  # the facts of every rank's answers (one process: the same), everywhere
        for request, (_, facts) in zip(requests, merged, strict=True):
            if facts is not None:
                genfacts.record(request.doc, facts)
        return [answer for answer, _ in merged]

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        return self._split(requests, super().loglikelihood, disable_tqdm)

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        return self._split(requests, super().loglikelihood_rolling, disable_tqdm)

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
