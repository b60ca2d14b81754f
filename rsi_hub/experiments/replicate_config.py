"""`ReplicateConfig`: every option of `rsi-hub replicate` / `replicate`, with its default and help.

The CLI's options are generated from these fields (`rsi_hub.cli.dataclass_args`). The training
values of each round live in its recipe (`nano` for round 0, `nano_rft` for round 1; `--round0-set`
/ `--round1-set KEY=VALUE` override them as `rsi-hub train` does); the round-1 sampling values
live here. The defaults are the measured ones (tests/bench/README_replicate.md records the
experiments behind each value).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rsi_hub.errors import ExperimentInputError

Preset = Literal["nano"]
Round1Start = Literal["continue", "restart"]
TeacherFiller = Literal["fixed", "varied"]
# The IF-818 suite and the two guards that run offline at this scale (MMLU and PREF do not).
PRIMARY_SUITE = "if818"
GUARD_SUITES = ("if263", "ev4")


def _overrides(value: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    return tuple(value)


@dataclass
class ReplicateConfig:
    """What `replicate` runs, at which scale, where to; validated on construction."""

    preset: Preset = field(
        metadata={
            "positional": True,
            "metavar": "PRESET",
            "help": "nano: the CPU replication (recipes nano and nano_rft, facts release/nano/)",
        }
    )
    out: str | Path = field(
        default="runs/nano", metadata={"metavar": "DIR", "help": "folder of every stage's output"}
    )
    minutes: float | None = field(
        default=None,
        metadata={
            "metavar": "M",
            "help": "wall-time budget: refuse at once when the stages' estimate exceeds it "
            "(naming the steps that fit), and stop between stages once it is spent",
        },
    )
    init_limit: int | None = field(
        default=None,
        metadata={
            "metavar": "N",
            "help": "score the untrained init on the first N IF-818 prompts only (its answers "
            "run to 2,048 tokens); compare pairs the prompts both runs scored",
        },
    )
    limit: int | None = field(
        default=None,
        metadata={
            "metavar": "N",
            "help": "score every model on the first N prompts of each suite (a smoke run: "
            "compare then says INCOMPLETE, as the guards need full suites)",
        },
    )
    seed: int = field(default=0, metadata={"help": "prompt split, init, data and trainer seed"})
    round0_recipe: str = field(
        default="nano", metadata={"metavar": "NAME", "help": "round 0's SFT recipe"}
    )
    round1_recipe: str = field(
        default="nano_rft", metadata={"metavar": "NAME", "help": "round 1's SFT recipe"}
    )
    round0_set: tuple[str, ...] = field(
        default=(),
        metadata={
            "action": "append",
            "metavar": "KEY=VALUE",
            "from_cli": _overrides,
            "help": "override a field of round 0's recipe (repeatable), e.g. max_steps=200",
        },
    )
    round1_set: tuple[str, ...] = field(
        default=(),
        metadata={
            "action": "append",
            "metavar": "KEY=VALUE",
            "from_cli": _overrides,
            "help": "override a field of round 1's recipe (repeatable), e.g. "
            "mix=rft:all,teacher:1200",
        },
    )
    round0_prompts: int | None = field(
        default=None,
        metadata={
            "metavar": "N",
            "help": "pool prompts the teacher answers for round 0 (default: the count in round "
            "0's recipe mix)",
        },
    )
    teacher_filler: TeacherFiller = field(
        default="fixed",
        metadata={
            "help": "where the teacher's filler prose starts (synth --teacher-filler): fixed, "
            "the first clause for every prompt (the words written tell how many sentences and "
            "words were written: IF-818 31.8 %% vs 26.2 %% after 600 steps), or varied"
        },
    )
    round1_start: Round1Start = field(
        default="continue",
        metadata={"help": "round 1 trains from round 0's weights (continue) or the init (restart)"},
    )
    rft_prompts: int = field(
        default=1500,
        metadata={
            "metavar": "N",
            "help": "fresh pool prompts (never in round 0) sampled for round 1",
        },
    )
    rft_k: int = field(default=2, metadata={"metavar": "K", "help": "samples per fresh prompt"})
    rft_temperature: float = field(
        default=0.7, metadata={"metavar": "T", "help": "round-1 sampling temperature"}
    )
    rft_max_new_tokens: int = field(
        default=256, metadata={"metavar": "N", "help": "tokens per round-1 sample at most"}
    )
    rft_batch_size: int = field(
        default=64, metadata={"metavar": "B", "help": "round-1 samples per generation call"}
    )
    rft_only_checks: tuple[str, ...] = field(
        default=(),
        metadata={
            "metavar": "TYPES",
            "from_cli": lambda value: tuple(p.strip() for p in value.split(",") if p.strip()),
            "help": "sample only fresh prompts carrying one of these check types (comma-separated)",
        },
    )
    eval_batch_size: int = field(
        default=32, metadata={"metavar": "B", "help": "rsi-hub eval --batch-size"}
    )
    background_evals: bool = field(
        default=True,
        metadata={
            "flag": "--serial",
            "action": "store_false",
            "help": "run every stage in turn; by default the init's evaluation runs in a second "
            "process beside round 0's training (one core each)",
        },
    )
    facts: str = field(
        default="nano",
        metadata={"metavar": "NAME", "help": "release facts release/NAME/ (guards and card)"},
    )
    # Library-only: tests on a tiny scale.
    eval_max_new_tokens: int | None = field(
        default=None,
        metadata={"cli": False, "help": "NOT served: an answer-length limit for smoke tests"},
    )

    guards: bool = field(
        default=True,
        metadata={
            "cli": False,
            "help": "score the trained rounds on the guards (IF263, EV4) too; off for the "
            "round-0 signal check and the demo, which only compare IF-818",
        },
    )

    def __post_init__(self) -> None:
        self.round0_set, self.round1_set = tuple(self.round0_set), tuple(self.round1_set)
        self.rft_only_checks = tuple(self.rft_only_checks)
        for name in ("init_limit", "limit", "round0_prompts", "rft_prompts", "rft_k",
                     "rft_max_new_tokens", "rft_batch_size", "eval_batch_size",
                     "eval_max_new_tokens"):  # fmt: skip
            value = getattr(self, name)
            if value is not None and value < 1:
                flag = "--" + name.replace("_", "-")
                raise ExperimentInputError(f"{flag} must be at least 1, got {value}.", field=name)
        if self.minutes is not None and self.minutes <= 0:
            raise ExperimentInputError(
                f"--minutes must be positive, got {self.minutes}.", field="minutes"
            )
        if self.rft_temperature < 0:
            raise ExperimentInputError(
                f"--rft-temperature must be 0 (greedy) or more, got {self.rft_temperature}.",
                field="rft_temperature",
            )
        for name in ("round0_set", "round1_set"):
            for pair in getattr(self, name):
                if "=" not in pair:
                    flag = "--" + name.replace("_", "-")
                    raise ExperimentInputError(
                        f"{flag} {pair!r}: expected KEY=VALUE, e.g. max_steps=200.", field=name
                    )

    @property
    def out_dir(self) -> Path:
        """The output folder as a path."""
        return Path(self.out)

    def eval_limit(self, model: str) -> int | None:
        """The prompt limit of one model's evaluation (`init` may be scored on fewer)."""
        if model == "init" and self.init_limit is not None:
            return self.init_limit if self.limit is None else min(self.init_limit, self.limit)
        return self.limit
