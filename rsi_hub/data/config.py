"""`PrepConfig`: every option of `rsi-hub prep` / `prepare`, with its default and help.

The CLI's options are generated from these fields (`rsi_hub.cli.dataclass_args`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rsi_hub.data.masking import SYSTEM_POLICIES, SystemPolicy
from rsi_hub.data.mix import parse_source_overrides
from rsi_hub.errors import ConfigError

DEFAULT_TOKENIZER = "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-Base-BF16"


@dataclass
class PrepConfig:
    """Which mix `prepare` reads, how it renders it and where it writes; validated on construction."""

    mix: str = field(
        metadata={"metavar": "SPEC", "help": "e.g. tulu3:all,smoltalk:all or iflensyn:33000"}
    )
    out: str | Path = field(metadata={"metavar": "DIR", "help": "output folder"})
    sources: dict[str, str] = field(
        default_factory=dict,
        metadata={
            "flag": "--source",
            "action": "append",
            "metavar": "NAME=PATH",
            "from_cli": parse_source_overrides,
            "help": "read source NAME from a local .jsonl/.json/.parquet file or folder "
            "(repeatable)",
        },
    )
    tokenizer: str | Path = field(
        default=DEFAULT_TOKENIZER,
        metadata={
            "metavar": "MODEL",
            "help": "folder or Hub id of the model whose tokenizer to use",
        },
    )
    seed: int = field(default=0, metadata={"help": "seed of the name:N samples"})
    system: SystemPolicy = field(
        default="keep",
        metadata={
            "help": "system message: the row's own (keep), the served k0 on every row, or none"
        },
    )
    max_length: int = field(default=8192, metadata={"help": "drop rows longer than this"})
    holdout_guard: bool = field(
        default=True,
        metadata={
            "flag": "--no-holdout-guard",
            "action": "store_false",
            "help": "do not drop rows matching holdout prompts (recorded in stats.json; never "
            "for real runs)",
        },
    )
    force: bool = field(
        default=False,
        metadata={"action": "store_true", "help": "replace DIR if it already holds files"},
    )

    def __post_init__(self) -> None:
        if self.system not in SYSTEM_POLICIES:
            raise ConfigError(
                f"--system must be one of {', '.join(SYSTEM_POLICIES)}, got {self.system!r}.",
                field="system",
            )
        if self.max_length < 1:
            raise ConfigError(
                f"--max-length must be at least 1, got {self.max_length}.", field="max_length"
            )
        self.sources = dict(self.sources or {})
