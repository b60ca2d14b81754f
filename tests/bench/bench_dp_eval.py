"""Benchmark: `rsi-hub eval` on 1 process against `--num-processes 2` (data-parallel), same prompts.

Both sides score the first N IF-818 prompts of the tiny checkpoint, greedy, the same new-token
limit and batch size, each from a fresh start as a user would run it:

- 1 process: `python -m rsi_hub.evaluate.parallel CONFIG` (what `rsi-hub eval` runs in
  process, without a launcher);
- 2 processes: `evaluate_run(..., num_processes=2)`, i.e. `accelerate launch --multi_gpu
  --num_processes 2 -m rsi_hub.evaluate.parallel CONFIG` on gloo CPU processes.

Printed per side: the median wall time of the whole command (imports, process group, model
load, generation, checker, write) and of lm-eval's part alone (`seconds` in meta.json), then
the ratios 2-process / 1-process. Rounds alternate the sides, as the CPU may be shared. Each
process runs `--threads` torch threads (default 1: on an oversubscribed machine OpenMP threads
spin). With 2 cores, the ideal lm-eval ratio is 0.5; start-up (a second interpreter, torch,
gloo rendezvous) is paid on both cores at once. Run by hand:

    python tests/bench/bench_dp_eval.py [--prompts 64] [--new-tokens 256] [--batch-size 8]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Benchmark the checkout this script lives in, whichever rsi-hub is installed.
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


def one_process(run: Path, settings: dict, work: Path) -> float:
    """Wall seconds of one fresh `rsi-hub eval` process."""
    from rsi_hub.evaluate.parallel import MODULE

    config = work / "config.json"
    config.write_text(json.dumps({"run": str(run), **settings, "num_processes": 1}))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", MODULE, str(config)], check=True, capture_output=True)
    return time.perf_counter() - started


def two_processes(run: Path, settings: dict) -> float:
    """Wall seconds of `evaluate_run(..., num_processes=2)` (the launch included)."""
    from rsi_hub.evaluate import evaluate_run
    from rsi_hub.evaluate.config import EvalConfig

    started = time.perf_counter()
    evaluate_run(EvalConfig(run, num_processes=2, **settings))
    return time.perf_counter() - started


def lm_eval_seconds(run: Path) -> float:
    """lm-eval's own time of the last evaluation of `run` (meta.json)."""
    meta = json.loads((run / "eval" / "if818" / "meta.json").read_text())
    return float(meta["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)

    from rsi_hub.tiny import build_tiny

    settings = {"suite": "if818", "limit": args.prompts, "max_gen_toks": args.new_tokens,
                "batch_size": args.batch_size}  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="bench-dp-eval-"))
    try:
        one = build_tiny(work / "one")
        two = work / "two"
        shutil.copytree(one, two)
        walls: dict[int, list[float]] = {1: [], 2: []}
        lm: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.rounds):
            walls[1].append(one_process(one, settings, work))
            lm[1].append(lm_eval_seconds(one))
            walls[2].append(two_processes(two, settings))
            lm[2].append(lm_eval_seconds(two))
        print(
            f"tiny nemotron_h, {args.prompts} IF-818 prompts, {args.new_tokens} new tokens, "
            f"batch {args.batch_size}, {args.rounds} alternating rounds, {args.threads} torch "
            f"thread(s) per process, {os.cpu_count()} CPUs"
        )
        for n in (1, 2):
            rounds = ", ".join(f"{w:.2f}" for w in walls[n])
            print(
                f"{n} process{'es' if n > 1 else '  '}: wall median {statistics.median(walls[n]):6.2f} s "
                f"(lm-eval {statistics.median(lm[n]):6.2f} s)  (wall: {rounds})"
            )
        wall_ratio = statistics.median(walls[2]) / statistics.median(walls[1])
        lm_ratio = statistics.median(lm[2]) / statistics.median(lm[1])
        print(f"ratio 2 / 1 processes: wall {wall_ratio:.3f}, lm-eval part {lm_ratio:.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
