"""Run one stage of `rsi-hub replicate` in a child process, beside the stages the parent runs.

`python -m rsi_hub.experiments.replicate_worker OUT STAGE` rebuilds the replication's stages from
the configuration the parent recorded in `OUT/replicate.json`, runs `STAGE`'s work and writes its
summary and wall time to `OUT/.worker-STAGE.json` (atomically: the parent reads all or nothing).
The parent alone hashes the outputs and writes the ledger, so the two processes never write one
file. Why a process and not a thread: a stage is transformers, lm-eval or TRL code with module
state of its own (lm-eval's task registry, the evaluation's generation facts), and a process has
its own interpreter lock, so both processes keep a core busy.

The child exits when its parent does: it watches its standard input, which the parent holds
open, and stops at end-of-file, so a killed replication leaves no stray evaluation running.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from rsi_hub.rundir import ReplicateLedger
from rsi_hub.rundir.jsonfile import write_text_atomic

#: The worker's exit code when the stage raised; the parent names the log file.
STAGE_FAILED = 3


def summary_path(out: Path, stage: str) -> Path:
    """Where the worker writes the summary of `stage`."""
    return out / f".worker-{stage}.json"


def log_path(out: Path, stage: str) -> Path:
    """Where the worker's output goes."""
    return out / f".worker-{stage}.log"


def _exit_with_parent() -> None:
    def watch() -> None:
        # os.read, not sys.stdin: a daemon thread blocked in a buffered read would hold its lock
        # at interpreter shutdown. b"" is end-of-file: the parent closed the pipe or died.
        while os.read(0, 4096):
            pass
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def run_stage(out: Path, name: str) -> dict[str, Any]:
    """Run the work of stage `name` of the replication recorded in `out`; return its summary."""
    from rsi_hub.experiments.replicate import Layout, replication_stages
    from rsi_hub.experiments.replicate_config import ReplicateConfig

    ledger = ReplicateLedger.read_if_any(out)
    if ledger is None or not ledger.config:
        raise SystemExit(f"{out}: no replicate.json with a configuration to run {name} from")
    config = ReplicateConfig(**{**ledger.config, "out": str(out)})  # the folder may have moved
    stages = {s.name: s for s in replication_stages(config, Layout(config.out_dir))}
    return stages[name].run()


def main(argv: list[str] | None = None) -> int:
    """`replicate_worker OUT STAGE`: see the module docstring."""
    out, name = argv if argv is not None else sys.argv[1:]
    out_dir = Path(out)
    _exit_with_parent()
    import torch

    # The parent runs on the other core meanwhile.
    torch.set_num_threads(1)
    started = time.monotonic()
    try:
        summary = run_stage(out_dir, name)
    except Exception:
        import traceback

        traceback.print_exc()
        return STAGE_FAILED
    # The stage's own wall time: the parent may collect the result later than it was ready.
    record = {"summary": summary, "wall_s": time.monotonic() - started}
    write_text_atomic(summary_path(out_dir, name), json.dumps(record, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
