"""Benchmark: the overhead of `rsi-hub eval` over a bare batched `model.generate`.

Both sides score the same first N IF-818 prompts of the tiny checkpoint, rendered with the
served template (k0), greedy, the same new-token limit and batch size, and each is timed end to
end from the run directory on disk:

- bare: load tokenizer and model, render, left-pad, `model.generate` per batch, decode.
- rsi-hub eval: `evaluate_run(EvalConfig(RUN, "if818", limit=N))` (weights hash, model load,
  lm-eval task setup, generation, checker, sample logs, atomic write).

The tiny random model never emits a stop token, so every answer runs to the limit on both sides:
the comparison is of the machinery, not of answer lengths. Rounds alternate bare / eval and the
medians are compared, because the CPU may be shared; the process CPU time is reported beside
the wall time, as it is far less sensitive to other load. Torch runs one thread by default:
on an oversubscribed machine, OpenMP threads spin and inflate times many-fold at random. Run by
hand:

    python tests/bench/bench_eval.py [--prompts 32] [--new-tokens 128] [--batch-size 8]
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

TARGET = 1.3


def timed(fn, *args) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu


def bare_generate(run: Path, prompts: list[str], new_tokens: int, batch_size: int) -> None:
    """The bare pipeline, model load included."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rsi_hub.chat import render

    tokenizer = AutoTokenizer.from_pretrained(run)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(run).eval()
    texts = [render([{"role": "user", "content": p}]) for p in prompts]
    answers = []
    for start in range(0, len(texts), batch_size):
        batch = tokenizer(
            texts[start : start + batch_size],
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
        )
        with torch.no_grad():
            out = model.generate(
                **batch, max_new_tokens=new_tokens, do_sample=False, pad_token_id=0
            )
        answers += tokenizer.batch_decode(
            out[:, batch.input_ids.shape[1] :], skip_special_tokens=True
        )
    assert len(answers) == len(prompts)


def rsi_hub_eval(run: Path, prompts: int, new_tokens: int, batch_size: int) -> None:
    """`evaluate_run` on the first `prompts` IF-818 documents."""
    from rsi_hub.evaluate import evaluate_run
    from rsi_hub.evaluate.config import EvalConfig

    config = EvalConfig(run, "if818", limit=prompts, max_gen_toks=new_tokens, batch_size=batch_size)
    evaluate_run(config)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args()

    import torch

    from rsi_hub.suites import load_suite
    from rsi_hub.tiny import build_tiny

    torch.set_num_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="bench-eval-"))
    try:
        run = build_tiny(work / "run")
        prompts = [row["prompt"] for row in load_suite("if818").rows[: args.prompts]]
        # Warm both code paths once (imports, kernels) so that round 1 is not special.
        bare_generate(run, prompts[:1], 2, 1)
        rsi_hub_eval(run, 1, 2, 1)
        bare, evals = [], []
        for _ in range(args.rounds):
            bare.append(timed(bare_generate, run, prompts, args.new_tokens, args.batch_size))
            evals.append(timed(rsi_hub_eval, run, args.prompts, args.new_tokens, args.batch_size))
        print(
            f"tiny nemotron_h, {args.prompts} IF-818 prompts, {args.new_tokens} new tokens, "
            f"batch {args.batch_size}, {args.rounds} alternating rounds, torch threads "
            f"{torch.get_num_threads()}"
        )
        for name, rounds in (("bare model.generate", bare), ("rsi-hub eval", evals)):
            walls = ", ".join(f"{w:.2f}" for w, _ in rounds)
            print(
                f"{name:20s} wall median {statistics.median(w for w, _ in rounds):6.2f} s, "
                f"CPU median {statistics.median(c for _, c in rounds):6.2f} s  (wall: {walls})"
            )
        for i, what in ((0, "wall"), (1, "CPU")):
            ratio = statistics.median(r[i] for r in evals) / statistics.median(r[i] for r in bare)
            verdict = "within" if ratio <= TARGET else "ABOVE"
            print(f"ratio eval / bare ({what}): {ratio:.3f}  ({verdict} the {TARGET} target)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
