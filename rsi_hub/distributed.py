"""Processes started by `accelerate launch` / torchrun: who launched us, and CPU process groups.

A utility leaf (it imports only `rsi_hub.hashing`): training records its launcher in the
evidence, and evaluation launches itself data-parallel through it.

Two facts of accelerate 1.15 this module exists for:

- `accelerate launch` with an FSDP (or `--multi_gpu`) config starts its workers through
  torchrun's launcher, which never exports `ACCELERATE_USE_CPU`, whatever the config's
  `use_cpu` says. On a machine without CUDA every worker then builds a `PartialState` of
  distributed type NO: no process group, and each "rank" silently trains (or evaluates) the
  whole job alone. `use_cpu_processes_without_gpu` restores the CPU (gloo) process group.
- A worker is never told which config file its launcher read. `launcher_record` reads the
  launcher's command line (`/proc/<parent>/cmdline`, Linux) to name the file and hash it, so
  that a run's evidence says exactly which FSDP config trained it.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi_hub import hashing

# Set by `accelerate launch` (and torchrun) in every worker.
_LAUNCHER_ENV = ("LOCAL_RANK", "ACCELERATE_LAUNCH")
USE_CPU_ENV = "ACCELERATE_USE_CPU"
USE_FSDP_ENV = "ACCELERATE_USE_FSDP"
# accelerate's default config, read when `accelerate launch` gets no --config_file.
DEFAULT_ACCELERATE_CONFIG = Path("~/.cache/huggingface/accelerate/default_config.yaml")


def under_launcher() -> bool:
    """True inside a process started by accelerate/torchrun (one of several ranks)."""
    return any(name in os.environ for name in _LAUNCHER_ENV)


def launched_world_size() -> int:
    """The number of processes the launcher started (`WORLD_SIZE`; 1 outside a launcher)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_main_process() -> bool:
    """True for the process that reports and writes: global rank 0 (or no launcher at all)."""
    return int(os.environ.get("RANK", "0")) == 0


def fsdp_requested() -> bool:
    """True when the launcher's config asked for FSDP (accelerate exports ACCELERATE_USE_FSDP)."""
    return os.environ.get(USE_FSDP_ENV, "false").lower() == "true"


def use_cpu_processes_without_gpu() -> bool:
    """Make a multi-process launch on a machine without CUDA use CPU (gloo) processes.

    Call before the first `PartialState` / `TrainingArguments` of the process and pass the
    result on: `PartialState(cpu=use_cpu_processes_without_gpu())` (PartialState, unlike
    AcceleratorState and TrainingArguments, does not read the variable itself). When this
    process is one of several started by a launcher and no CUDA device is visible, sets
    `ACCELERATE_USE_CPU=true`; a GPU machine keeps NCCL, a single process stays single.

    Returns:
        True when this process runs on the CPU by request (`ACCELERATE_USE_CPU` true).
    """
    if os.environ.get(USE_CPU_ENV, "").lower() in ("1", "true", "yes"):
        return True
    if not under_launcher() or launched_world_size() <= 1:
        return False
    import torch

    if torch.cuda.is_available():
        return False
    os.environ[USE_CPU_ENV] = "true"
    return True


@dataclass(frozen=True)
class LauncherRecord:
    """How this process was launched, for the evidence.

    Attributes:
        launcher: "accelerate launch", "torchrun", "python" (no launcher) or the program name.
        command: the launcher's command line (`shlex.join`), or None when unreadable.
        config_file: the accelerate config file it read (absolute), or None.
        config_sha256: sha256 of that file's bytes, or None.
        world_size: processes started (`WORLD_SIZE`).
        note: why a field is None, when it is.
    """

    launcher: str
    command: str | None
    config_file: str | None
    config_sha256: str | None
    world_size: int
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The record as plain data (the evidence's `launcher` section)."""
        return {
            "launcher": self.launcher,
            "command": self.command,
            "config_file": self.config_file,
            "config_sha256": self.config_sha256,
            "world_size": self.world_size,
            "note": self.note,
            **self.extra,
        }


def _cmdline(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def _cwd(pid: int) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None


def parse_launch_command(argv: list[str]) -> tuple[str, str | None]:
    """(launcher name, `--config_file` value or None) of a launcher's command line.

    Knows `accelerate launch` (console script or `python -m accelerate.commands.launch`) and
    torchrun (`torchrun`, `python -m torch.distributed.run`).
    """
    names = [Path(part).name for part in argv]
    is_accelerate = ("accelerate" in names and "launch" in argv) or (
        "accelerate.commands.launch" in argv
    )
    if is_accelerate:
        config = None
        for i, part in enumerate(argv):
            if part in ("--config_file", "--config-file") and i + 1 < len(argv):
                config = argv[i + 1]
                break
            if part.startswith(("--config_file=", "--config-file=")):
                config = part.split("=", 1)[1]
                break
        return "accelerate launch", config
    if "torchrun" in names or "torch.distributed.run" in argv:
        return "torchrun", None
    return names[0] if names else "unknown", None


def launcher_record() -> LauncherRecord:
    """Who started this process, and the sha256 of the accelerate config file it read.

    Under a launcher the parent process is the launcher itself (torchrun's agent runs inside
    `accelerate launch`): its command line names the config file, resolved against its working
    folder. Without a launcher the record says "python" and world size 1.
    """
    world = launched_world_size()
    if not under_launcher():
        return LauncherRecord("python", None, None, None, world)
    parent = os.getppid()
    argv = _cmdline(parent)
    if argv is None:
        return LauncherRecord(
            "unknown", None, None, None, world, note=f"/proc/{parent}/cmdline is not readable"
        )
    launcher, config = parse_launch_command(argv)
    note = None
    path: Path | None = None
    if config is not None:
        path = Path(config)
        if not path.is_absolute():
            path = (_cwd(parent) or Path.cwd()) / path
    elif launcher == "accelerate launch":
        default = DEFAULT_ACCELERATE_CONFIG.expanduser()
        if default.is_file():
            path, note = default, "no --config_file: accelerate read its default config"
        else:
            note = "no --config_file and no default accelerate config"
    sha = None
    if path is not None:
        if path.is_file():
            sha = hashing.sha256_file(path)
        else:
            note = f"{path} no longer exists"
    return LauncherRecord(
        launcher, shlex.join(argv), str(path) if path else None, sha, world, note=note
    )


def accelerate_command(
    num_processes: int, module: str, args: list[str], *, config_file: str | None = None
) -> list[str]:
    """`accelerate launch` of `python -m module args` on `num_processes` local processes.

    `--multi_gpu` picks torchrun's launcher on a CPU machine as well (accelerate's `--cpu`
    would pick mpirun); `use_cpu_processes_without_gpu` in the workers then builds gloo
    groups. Port 0 lets the OS choose a free rendezvous port, so that launches side by side
    never collide. accelerate runs from this interpreter (`python -m accelerate.commands.launch`),
    not whichever `accelerate` is first on PATH.
    """
    command = [sys.executable, "-m", "accelerate.commands.launch"]
    if config_file is not None:
        command += ["--config_file", config_file]
    else:
        command += ["--multi_gpu", "--num_machines", "1", "--mixed_precision", "no"]
        command += ["--dynamo_backend", "no"]
    command += ["--num_processes", str(num_processes), "--main_process_port", "0"]
    return [*command, "-m", module, *args]
