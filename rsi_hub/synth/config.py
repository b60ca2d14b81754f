"""`SynthConfig`: every option of `rsi-hub synth lensyn|rft` / `synthesize`, with its default.

The CLI's options are generated from these fields (`rsi_hub.cli.dataclass_args`). The sampling
defaults are `SamplingSettings`'s own, read from it, so that they live in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rsi_hub.errors import SynthInputError
from rsi_hub.synth.backends import REFERENCE_MODEL, SamplingSettings
from rsi_hub.synth.filter import MODES
from rsi_hub.synth.shards import Shard


def _split_types(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


@dataclass
class SynthConfig:
    """What `synthesize` generates, from which checkpoint, where to; validated on construction."""

    mode: str = field(
        metadata={"cli": False, "help": "lensyn (scaffolded) or rft (rejection sampling)"}
    )
    model: str | Path = field(
        metadata={
            "metavar": "RUN",
            "help": f"checkpoint folder (`{REFERENCE_MODEL}` with --backend reference)",
        }
    )
    out: str | Path = field(metadata={"metavar": "DIR", "help": "output folder (resumable)"})
    k: int = field(default=4, metadata={"help": "samples per prompt"})
    limit: int | None = field(default=None, metadata={"help": "first N eligible prompts only"})
    backend: Literal["hf", "vllm", "reference"] = field(
        default="hf",
        metadata={
            "help": "generation backend; `reference` is the teacher: the suites' rule-based "
            "reference responder (rft mode, --model reference --k 1)"
        },
    )
    teacher_filler: Literal["varied", "fixed"] = field(
        default="varied",
        metadata={
            "help": "--backend reference only: where each answer's filler prose starts. varied: "
            "a hash of the prompt (the suites' own reference answers); fixed: the first clause "
            "for every prompt, so a model imitating the teacher can tell from the words it has "
            "written how many sentences or words it has written (the nano replication's teacher)"
        },
    )
    prompts_file: str | Path | None = field(
        default=None,
        metadata={
            "flag": "--prompts",
            "metavar": "FILE",
            "help": "JSONL prompts ({id, prompt, checks}) instead of the suites' generation pool",
        },
    )
    check_types: tuple[str, ...] = field(
        default=(),
        metadata={
            "flag": "--only-checks",
            "metavar": "TYPES",
            "from_cli": _split_types,
            "help": "comma-separated check types: use only prompts carrying one "
            "(e.g. word_eq,word_times)",
        },
    )
    temperature: float = field(
        default=SamplingSettings.temperature, metadata={"help": "sampling temperature (0: greedy)"}
    )
    top_p: float = field(default=SamplingSettings.top_p, metadata={"help": "nucleus sampling"})
    max_new_tokens: int = field(
        default=SamplingSettings.max_new_tokens, metadata={"help": "tokens per sample at most"}
    )
    seed: int = field(default=SamplingSettings.seed, metadata={"help": "sampling seed"})
    batch_size: int | None = field(
        default=None,
        metadata={
            "help": "requests per generation call and ledger flush (default: hf 16, vllm 1024)"
        },
    )
    tensor_parallel_size: int = field(
        default=1, metadata={"help": "GPUs per vLLM engine (vllm backend only)"}
    )
    shard: str | None = field(
        default=None,
        metadata={
            "metavar": "I/N",
            "help": "run only shard I of N (0-based) of the selected prompts, a round-robin "
            "slice; join the N shard folders with `rsi-hub synth merge`",
        },
    )
    force: bool = field(
        default=False,
        metadata={
            "action": "store_true",
            "help": "start over if OUT holds a run with other settings",
        },
    )

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise SynthInputError(
                f"unknown synthesis mode {self.mode!r}; choose one of {MODES}.", field="mode"
            )
        self.check_types = tuple(self.check_types)
        for name in ("k", "limit", "batch_size", "tensor_parallel_size", "max_new_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                flag = "--" + name.replace("_", "-")
                raise SynthInputError(f"{flag} must be at least 1, got {value}.", field=name)
        if self.temperature < 0:
            raise SynthInputError(
                f"--temperature must be 0 (greedy) or more, got {self.temperature}.",
                field="temperature",
            )
        if self.shard is not None:
            Shard.parse(self.shard)
        if self.backend == "reference":
            self._check_reference()
        elif self.teacher_filler != "varied":
            raise SynthInputError(
                f"--teacher-filler is the reference teacher's setting; with --backend "
                f"{self.backend} answers come from the model: drop it.",
                field="teacher_filler",
            )
        if not 0 < self.top_p <= 1:
            raise SynthInputError(f"--top-p must be in (0, 1], got {self.top_p}.", field="top_p")

    def _check_reference(self) -> None:
        # The teacher answers from the checks in the served conversation: lensyn's scaffold and
        # K > 1 (K identical answers) would only make duplicates.
        if self.mode != "rft":
            raise SynthInputError(
                f"--backend reference writes served replies: use `rsi-hub synth rft`, not "
                f"{self.mode}.",
                field="backend",
            )
        if str(self.model) != REFERENCE_MODEL:
            raise SynthInputError(
                f"--backend reference has no checkpoint: pass --model {REFERENCE_MODEL}, "
                f"got {self.model!r}.",
                field="model",
            )
        if self.k != 1:
            raise SynthInputError(
                f"--backend reference answers each prompt one way: pass --k 1, got {self.k}.",
                field="k",
            )

    @property
    def sampling(self) -> SamplingSettings:
        """The sampling settings (recorded in provenance, checked on resume)."""
        return SamplingSettings(self.temperature, self.top_p, self.max_new_tokens, self.seed)
