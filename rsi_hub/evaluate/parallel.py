"""`rsi-hub eval RUN --num-processes N`: the same evaluation, data-parallel under `accelerate launch`.

The command re-runs itself as N processes of this module (`accelerate launch --multi_gpu
--num_processes N -m rsi_hub.evaluate.parallel CONFIG.json`), each with the very `EvalConfig`
(written to a private JSON file, library-only fields included). In the workers `RsiHFLM`
splits lm-eval's requests across the ranks and gathers the answers back in order
(`rsi_hub.evaluate.models`); rank 0 alone writes `RUN/eval/<suite>/`, through the same atomic
staging swap as one process, so a failed launch leaves the previous folder or none, never part
of one. Without CUDA the workers form a gloo group of CPU processes
(`rsi_hub.distributed.use_cpu_processes_without_gpu`).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rsi_hub.distributed import (
    accelerate_command,
    is_main_process,
    launched_world_size,
    use_cpu_processes_without_gpu,
)
from rsi_hub.errors import DistributedSetupError, EvaluationError
from rsi_hub.evaluate.config import EvalConfig

MODULE = "rsi_hub.evaluate.parallel"
_OUTCOMES = "outcomes.json"
_LOG_TAIL = 4000


def _config_json(config: EvalConfig) -> dict[str, Any]:
    return {
        f.name: str(v) if isinstance(v := getattr(config, f.name), Path) else v
        for f in dataclasses.fields(config)
    }


def launch_data_parallel(
    config: EvalConfig, *, progress: Callable[[str], None] | None = None
) -> list[Any]:
    """Run `evaluate_run(config)` on `config.num_processes` processes; return rank 0's outcomes.

    Raises:
        EvaluationError: the launch failed (the message ends with its log's last lines).
    """
    from rsi_hub.evaluate.runner import SuiteOutcome

    say = progress or (lambda _line: None)
    with tempfile.TemporaryDirectory(prefix="rsi-hub-eval-dp-") as work:
        config_path = Path(work) / "config.json"
        config_path.write_text(json.dumps(_config_json(config)), encoding="utf-8")
        command = accelerate_command(config.num_processes, MODULE, [str(config_path)])
        say(f"launching {config.num_processes} processes: {' '.join(command)}")
        log = Path(work) / "stderr.log"
        with log.open("w+", encoding="utf-8") as errors:
            # Rank 0's progress lines as they come (an evaluation of the 30B model takes hours).
            with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True) as p:
                assert p.stdout is not None
                for line in p.stdout:
                    say(line.rstrip("\n"))
            errors.seek(0)
            tail = errors.read()[-_LOG_TAIL:]
        if p.returncode != 0:
            raise EvaluationError(
                f"data-parallel evaluation of {config.run} on {config.num_processes} processes "
                f"failed (exit {p.returncode}); each RUN/eval/<suite>/ folder is as before or "
                f"complete (suites finished before the failure were written), never partial. "
                f"Last lines of its log:\n{tail}",
                field="num_processes",
            )
        outcomes = json.loads((Path(work) / _OUTCOMES).read_text(encoding="utf-8"))
    return [
        SuiteOutcome(o["suite"], Path(o["folder"]), o["metrics"], o["seconds"]) for o in outcomes
    ]


def worker(config_path: str | Path) -> None:
    """One rank of a data-parallel evaluation (run by `accelerate launch`, never by hand).

    Raises:
        DistributedSetupError: fewer processes joined the group than were asked for.
    """
    cpu = use_cpu_processes_without_gpu()  # before anything builds accelerate's state
    from accelerate import PartialState

    from rsi_hub.evaluate.runner import evaluate_run

    state = PartialState(cpu=cpu)
    data = json.loads(Path(config_path).read_text(encoding="utf-8"))
    config = EvalConfig(**data)
    if state.num_processes != config.num_processes:
        raise DistributedSetupError(
            f"--num-processes {config.num_processes}: the launcher started "
            f"{launched_world_size()} processes and {state.num_processes} joined the process "
            f"group ({state.distributed_type}); each would score every document alone.",
            field="num_processes",
        )
    main = is_main_process()
    outcomes = evaluate_run(config, progress=print if main else None)
    if main:
        record = [
            {"suite": o.suite, "folder": str(o.folder), "metrics": o.metrics, "seconds": o.seconds}
            for o in outcomes
        ]
        (Path(config_path).parent / _OUTCOMES).write_text(json.dumps(record), encoding="utf-8")
    state.wait_for_everyone()


if __name__ == "__main__":
    worker(sys.argv[1])
