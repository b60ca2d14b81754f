"""Generation backends: batched sampling from a checkpoint with the served chat template.

`hf` runs `model.generate` (any machine, the tiny checkpoint on a CPU); `vllm` runs vLLM's
offline `LLM.generate` (GPU machines, the 30B model). Both render every conversation with
`rsi_hub.chat.render` and tokenize it without adding special tokens, so the model sees exactly
the served token sequence, and both stop on the served stop ids. `reference` is a teacher, not a
checkpoint: the suites' rule-based reference responder answers each prompt from its checks
(round 0 of the CPU replication trains on its checker-verified answers).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from rsi_hub.chat import STOP_TOKEN_IDS, render
from rsi_hub.errors import SynthError, SynthInputError
from rsi_hub.suites.prompts import PoolPrompt

Message = dict[str, Any]
BACKENDS = ("hf", "vllm", "reference")
# The `--model` value of the reference backend: it has no checkpoint, the teacher is code.
REFERENCE_MODEL = "reference"
# What provenance records as the model of reference-backend data.
REFERENCE_TEACHER = "rsi_hub.suites.responder.reference_response"
# Where the teacher's filler starts (`reference_response(filler_start=...)`): `varied` is the
# suites' own reference answer (a hash of the prompt), `fixed` the first clause for every prompt.
TEACHER_FILLERS: dict[str, int | None] = {"varied": None, "fixed": 0}


def reference_teacher_name(filler: str = "varied") -> str:
    """The teacher's name in provenance: the responder, and its filler when not the suites' own."""
    return REFERENCE_TEACHER if filler == "varied" else f"{REFERENCE_TEACHER}(filler_start=0)"


@dataclass(frozen=True)
class SamplingSettings:
    """How samples are drawn; recorded in provenance and checked on resume."""

    temperature: float = 0.8
    top_p: float = 0.95
    max_new_tokens: int = 1024
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


@dataclass(frozen=True)
class GenerationRequest:
    """One sample to draw: sample `sample` of prompt `prompt_id`, from `messages`."""

    prompt_id: str | int
    sample: int
    messages: list[Message]


@dataclass(frozen=True)
class Generation:
    """One decoded completion; `truncated` means it ran out of tokens before a stop id."""

    text: str
    truncated: bool = False
    n_tokens: int = 0


class GenerationBackend(Protocol):
    """Anything that turns a batch of requests into one generation per request, in order."""

    name: str

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Draw one completion per request."""
        ...


def request_seed(base_seed: int, prompt_id: str | int, sample: int) -> int:
    """A per-sample seed: the same (seed, prompt, sample) draws the same sample in any batch.

    vLLM honours per-request seeds, which makes a resumed run draw exactly what the interrupted
    one would have drawn.
    """
    digest = hashlib.sha256(f"{base_seed}\x1f{prompt_id}\x1f{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def render_prompt(messages: list[Message]) -> str:
    """The served rendering of a generation prompt (thinking off, generation prompt on)."""
    return render(messages, add_generation_prompt=True, enable_thinking=False)


class HFBackend:
    """Batched `model.generate` with left padding (transformers; CPU or GPU)."""

    name = "hf"

    def __init__(
        self,
        model_path: str | Path,
        sampling: SamplingSettings,
        *,
        device: str | None = None,
        dtype: str = "auto",
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model_path = str(model_path)
        self.sampling = sampling
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        # Left padding: every row's generation starts right after its own prompt.
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            raise SynthInputError(
                f"{self.model_path}: the tokenizer has no pad token.",
                path=self.model_path,
                field="model",
            )
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = AutoModelForCausalLM.from_pretrained(self.model_path, dtype=dtype)
        self.model.to(self.device).eval()

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Sample one completion per request in one padded batch."""
        import torch

        if not requests:
            return []
        texts = [render_prompt(r.messages) for r in requests]
        batch = self.tokenizer(
            texts, return_tensors="pt", padding=True, add_special_tokens=False
        ).to(self.device)
        # One seed per batch (HF sampling cannot seed rows separately): derived from the first
        # request, so a resumed batch is reproducible given the same batch composition.
        first = requests[0]
        torch.manual_seed(request_seed(self.sampling.seed, first.prompt_id, first.sample))
        with torch.no_grad():
            out = self.model.generate(
                **batch,
                do_sample=self.sampling.temperature > 0,
                temperature=self.sampling.temperature if self.sampling.temperature > 0 else None,
                top_p=self.sampling.top_p if self.sampling.temperature > 0 else None,
                top_k=0,  # no top-k cut (vLLM's default), only top_p
                max_new_tokens=self.sampling.max_new_tokens,
                eos_token_id=list(STOP_TOKEN_IDS),
                pad_token_id=self.tokenizer.pad_token_id,
            )
        new_tokens = out[:, batch["input_ids"].shape[1] :].tolist()
        return [self._decode(row) for row in new_tokens]

    def _decode(self, row: list[int]) -> Generation:
        stop_at = next((i for i, t in enumerate(row) if t in STOP_TOKEN_IDS), None)
        if stop_at is None:
            # No stop id within max_new_tokens: the completion was cut off.
            return Generation(self.tokenizer.decode(row, skip_special_tokens=True), True, len(row))
        kept = row[:stop_at]
        return Generation(self.tokenizer.decode(kept, skip_special_tokens=True), False, len(kept))


def vllm_sampling_kwargs(sampling: SamplingSettings, request: GenerationRequest) -> dict[str, Any]:
    """The `vllm.SamplingParams` arguments of one request (per-request seed, served stop ids)."""
    return {
        "n": 1,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p if sampling.temperature > 0 else 1.0,
        "max_tokens": sampling.max_new_tokens,
        "seed": request_seed(sampling.seed, request.prompt_id, request.sample),
        "stop_token_ids": list(STOP_TOKEN_IDS),
        "skip_special_tokens": True,
    }


def vllm_prompts(tokenizer: Any, requests: Sequence[GenerationRequest]) -> list[dict[str, Any]]:
    """vLLM token prompts: the served rendering, tokenized by us without added special tokens.

    Passing token ids rather than text keeps vLLM from prepending a BOS the served template
    does not have.
    """
    return [
        {
            "prompt_token_ids": tokenizer(render_prompt(r.messages), add_special_tokens=False)[
                "input_ids"
            ]
        }
        for r in requests
    ]


class VLLMBackend:
    """vLLM offline batched generation (GPU machines; `pip install vllm`)."""

    name = "vllm"

    def __init__(
        self,
        model_path: str | Path,
        sampling: SamplingSettings,
        *,
        tensor_parallel_size: int = 1,
        max_model_len: int | None = None,
        gpu_memory_utilization: float = 0.9,
    ) -> None:
        try:
            from vllm import LLM
        except ImportError as err:  # pragma: no cover - exercised only without vllm installed
            raise SynthError(
                "the vllm backend needs vLLM on a GPU machine: `pip install vllm`, or use "
                "`--backend hf`.",
                field="backend",
            ) from err
        from transformers import AutoTokenizer

        self.model_path = str(model_path)
        self.sampling = sampling
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        self.llm = LLM(
            model=self.model_path,
            tensor_parallel_size=tensor_parallel_size,
            max_model_len=max_model_len,
            gpu_memory_utilization=gpu_memory_utilization,
            seed=sampling.seed,
        )

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """One offline `LLM.generate` call over the whole batch; vLLM schedules it."""
        from vllm import SamplingParams

        if not requests:
            return []
        params = [SamplingParams(**vllm_sampling_kwargs(self.sampling, r)) for r in requests]
        outputs = self.llm.generate(vllm_prompts(self.tokenizer, requests), params, use_tqdm=False)
        return [vllm_generation(o.outputs[0]) for o in outputs]


def vllm_generation(completion: Any) -> Generation:
    """Our view of a vLLM `CompletionOutput`: `finish_reason == "length"` means cut off."""
    return Generation(
        text=completion.text,
        truncated=completion.finish_reason == "length",
        n_tokens=len(completion.token_ids),
    )


class ReferenceBackend:
    """The suites' reference responder as a teacher: one rule-built answer per prompt.

    It reads each prompt's checks (never the checker), so synth's checker filter still decides
    what is kept. The answer is deterministic: sampling settings do not apply and K must be 1.
    """

    name = "reference"

    def __init__(self, prompts: Sequence[PoolPrompt], *, filler: str = "varied") -> None:
        if filler not in TEACHER_FILLERS:
            raise SynthInputError(
                f"unknown teacher filler {filler!r}: choose one of {', '.join(TEACHER_FILLERS)}.",
                field="teacher_filler",
            )
        self.prompts = {str(p.id): p for p in prompts}
        self.filler_start = TEACHER_FILLERS[filler]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """The reference response of each request's prompt (looked up by prompt id)."""
        from rsi_hub.suites.responder import reference_response

        out = []
        for request in requests:
            prompt = self.prompts.get(str(request.prompt_id))
            if prompt is None:
                raise SynthError(
                    f"reference backend: prompt {request.prompt_id!r} is not among the "
                    "prompts it was built with."
                )
            text = reference_response(
                {"prompt": prompt.prompt, "checks": list(prompt.checks)},
                filler_start=self.filler_start,
            )
            out.append(Generation(text, False, 0))
        return out


def teacher_sha256() -> str:
    """sha256 of the reference responder's source: binds teacher data to the code that wrote it."""
    from rsi_hub.hashing import sha256_file
    from rsi_hub.suites import responder

    return sha256_file(Path(responder.__file__))


def make_backend(
    name: str,
    model_path: str | Path,
    sampling: SamplingSettings,
    *,
    tensor_parallel_size: int = 1,
    prompts: Sequence[PoolPrompt] = (),
    teacher_filler: str = "varied",
) -> Any:
    """The backend called `name` (`hf`, `vllm` or `reference`) for `model_path`.

    `tensor_parallel_size` spreads one vLLM engine over that many GPUs (hf ignores it);
    `prompts` are the prompts the reference teacher answers and `teacher_filler` where its
    filler starts (`TEACHER_FILLERS`); the other backends ignore both.
    """
    if name == "reference":
        return ReferenceBackend(prompts, filler=teacher_filler)
    if name == "hf":
        return HFBackend(model_path, sampling)
    if name == "vllm":
        return VLLMBackend(model_path, sampling, tensor_parallel_size=tensor_parallel_size)
    raise SynthInputError(
        f"unknown backend {name!r}: choose one of {', '.join(BACKENDS)}.", field="backend"
    )
