"""Benchmark: `rsi-hub eval --endpoint` (a live `rsi-hub serve`) over in-process `rsi-hub eval`.

Both sides score the same first N IF-818 prompts of the tiny checkpoint with the same new-token
limit, end to end:

- hf: `evaluate_run(EvalConfig(RUN, "if818", limit=N))` in process (weights hash, model load,
  lm-eval, generation in batches of B, checker, sample logs);
- endpoint: the same with `endpoint=URL`, against one `rsi-hub serve RUN` (transformers serve)
  process started before the rounds (a deployment is long-lived: its start-up is reported
  apart, not in the ratio). lm-eval sends one request at a time and the engine generates one
  sequence at a time: its `--continuous-batching` fails on nemotron_h ("Invalid layer type:
  linear_attention", transformers 5.24), so there is no batching to win back.
- hf batch 1: the in-process eval generating one sequence at a time too, which separates the
  cost of batching from the cost of the HTTP path.

The tiny random model never emits a stop token, so every answer runs to the limit on both sides.
Rounds alternate and medians are compared; client and server each run torch on one thread (on
a shared machine more threads only spin). Run by hand:

    python tests/bench/bench_endpoint_eval.py [--prompts 32] [--new-tokens 64] [--batch-size 8]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Benchmark the checkout this script lives in, whichever rsi-hub is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TARGET = 1.2


def timed(fn, *args, **kwargs) -> float:
    """Wall seconds of one call."""
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def score(run: Path, prompts: int, new_tokens: int, batch_size: int, endpoint: str | None) -> None:
    """`evaluate_run` on the first `prompts` IF-818 documents, in process or via `endpoint`."""
    from rsi_hub.evaluate import evaluate_run
    from rsi_hub.evaluate.config import EvalConfig

    evaluate_run(
        EvalConfig(
            run,
            "if818",
            limit=prompts,
            max_gen_toks=new_tokens,
            batch_size=None if endpoint else batch_size,
            endpoint=endpoint,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8, help="hf batch size (default 8)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import torch

    from rsi_hub.tiny import build_tiny
    from tests.serving_server import serving

    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="bench-endpoint-"))
    try:
        run = build_tiny(work / "run")
        started = time.perf_counter()
        with serving(run, work / "server.log") as server:
            startup = time.perf_counter() - started
            # Warm both paths once (imports, first request) so that round 1 is not special.
            score(run, 1, 2, 1, None)
            score(run, 1, 2, 1, server.base_url)
            hf, hf_one, endpoint = [], [], []
            for _ in range(args.rounds):
                hf.append(timed(score, run, args.prompts, args.new_tokens, args.batch_size, None))
                hf_one.append(timed(score, run, args.prompts, args.new_tokens, 1, None))
                endpoint.append(
                    timed(score, run, args.prompts, args.new_tokens, 1, server.base_url)
                )
        print(
            f"tiny nemotron_h, {args.prompts} IF-818 prompts, {args.new_tokens} new tokens, "
            f"hf batch {args.batch_size}, {args.rounds} alternating rounds, one torch thread "
            f"each; server start-up {startup:.1f} s (not counted)"
        )
        named = (
            (f"hf batch {args.batch_size}", hf),
            ("hf batch 1", hf_one),
            ("endpoint", endpoint),
        )
        for name, walls in named:
            shown = ", ".join(f"{w:.2f}" for w in walls)
            print(f"{name:14s} wall median {statistics.median(walls):6.2f} s  ({shown})")
        ratio = statistics.median(endpoint) / statistics.median(hf)
        verdict = "within" if ratio <= TARGET else "ABOVE"
        print(
            f"ratio endpoint / hf batch {args.batch_size} (wall): {ratio:.3f}  "
            f"({verdict} the {TARGET} target)"
        )
        one = statistics.median(endpoint) / statistics.median(hf_one)
        print(f"ratio endpoint / hf batch 1 (wall): {one:.3f}  (the HTTP path alone)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
