"""Benchmark: round 0 of the CPU replication (issue 14), end to end through `rsi-hub` commands.

Stages, each a `rsi-hub` command run as a subprocess and timed:

1. teacher: `rsi-hub synth rft --backend reference --model reference --k 1` on the pool (the
   suites' reference responder, checker-verified, holdout audit on);
2. init: `rsi-hub tiny --size nano` (the random init the `nano` recipe starts from, seeded);
3. prep: `rsi-hub prep --mix rft:N --system k0` with the init's tokenizer (served rendering,
   assistant-only mask, holdout guard on);
4. train: `rsi-hub train sft --recipe nano model=INIT dataset=DATA` (plus `--set` overrides);
5. eval init and round 0: `rsi-hub eval RUN --suite if818 [--limit N]` (k0, greedy, stop at
   `<|im_end|>`);
6. compare: `rsi-hub compare INIT ROUND0`.

It prints the prompt-level and check-level IF-818 pass rates of both models, the ratio of
round 0 to the untrained baseline, and the wall time of every stage. Check level counts
(prompt, check type) pairs, as `rsi-hub failures` does. The untrained model never emits a stop
token, so each of its answers runs to 2,048 tokens: its evaluation dominates the wall time of
a full run (`--init-limit` scores it on fewer prompts; compare then pairs the common ones).
Run by hand:

    python tests/bench/bench_replicate.py [--out runs/nano] [--examples 4800] [--limit 200]
        [--init-limit 100] [--set max_steps=200 --set learning_rate=3e-3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

# Benchmark the checkout this script lives in, whichever rsi-hub is installed.
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p
)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def rsi_hub(*args: str, log: Path) -> float:
    """Run `rsi-hub ARGS` (output appended to `log`); return its wall seconds; raise on failure."""
    start = time.perf_counter()
    with log.open("a") as out:
        out.write(f"\n$ rsi-hub {' '.join(args)}\n")
        out.flush()
        code = subprocess.call(
            [sys.executable, "-m", "rsi_hub", *args], stdout=out, stderr=subprocess.STDOUT
        )
    if code != 0:
        raise SystemExit(f"rsi-hub {' '.join(args)} failed with exit {code}; see {log}")
    return time.perf_counter() - start


def scores(run: Path) -> dict[str, float]:
    """Prompt-level and check-level IF-818 pass rates of an evaluated run, and the counts."""
    from rsi_hub.evaluate.failures import failure_report

    report = failure_report(run).to_json()
    carrying = sum(t["carrying"] for t in report["by_type"].values())
    failing = sum(t["failing"] for t in report["by_type"].values())
    return {
        "n": report["n"],
        "passed": report["passed"],
        "prompt": report["passed"] / report["n"],
        "check": (carrying - failing) / carrying,
        "by_type": {
            k: (v["carrying"] - v["failing"], v["carrying"]) for k, v in report["by_type"].items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="runs/nano", help="folder for every stage's output")
    parser.add_argument("--examples", type=int, default=4800, help="teacher rows trained on")
    parser.add_argument("--limit", type=int, default=None, help="IF-818 prompts (default all)")
    parser.add_argument("--init-limit", type=int, default=None, help="IF-818 prompts for init")
    parser.add_argument("--seed", type=int, default=0, help="init, data sample and trainer seed")
    parser.add_argument("--set", action="append", default=[], help="recipe KEY=VALUE override")
    parser.add_argument("--max-length", type=int, default=512, help="prep: drop longer rows")
    parser.add_argument("--eval-batch-size", default="32", help="rsi-hub eval --batch-size")
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "bench.log"
    teacher, init, data, round0 = out / "teacher", out / "init", out / "data", out / "round0"
    batch = ["--batch-size", args.eval_batch_size]
    limit = [*batch] if args.limit is None else [*batch, "--limit", str(args.limit)]
    init_limit = args.init_limit or args.limit
    times: dict[str, float] = {}
    times["teacher"] = rsi_hub(
        "synth", "rft", "--backend", "reference", "--model", "reference", "--k", "1",
        "--out", str(teacher), log=log,
    )  # fmt: skip
    times["init"] = rsi_hub(
        "tiny", str(init), "--size", "nano", "--seed", str(args.seed), "--force", log=log
    )
    times["prep"] = rsi_hub(
        "prep", "--mix", f"rft:{args.examples}", "--source", f"rft={teacher}/data.jsonl",
        "--tokenizer", str(init), "--system", "k0", "--max-length", str(args.max_length),
        "--seed", str(args.seed), "--out", str(data), "--force", log=log,
    )  # fmt: skip
    times["train"] = rsi_hub(
        "train", "sft", "--recipe", "nano", f"model={init}", f"dataset={data}",
        f"output_dir={round0}", f"seed={args.seed}", f"max_length={args.max_length}", *args.set,
        log=log,
    )  # fmt: skip
    init_args = [*batch] if init_limit is None else [*batch, "--limit", str(init_limit)]
    times["eval init"] = rsi_hub("eval", str(init), "--suite", "if818", *init_args, log=log)
    times["eval round0"] = rsi_hub("eval", str(round0), "--suite", "if818", *limit, log=log)
    compare = subprocess.run(
        [sys.executable, "-m", "rsi_hub", "compare", str(init), str(round0)],
        capture_output=True,
        text=True,
    )
    before, after = scores(init), scores(round0)
    figures = {"times_s": times, "init": before, "round0": after, "overrides": args.set}
    (out / "bench.json").write_text(json.dumps(figures, indent=2))
    print(f"stage wall times: {', '.join(f'{k} {v:.0f} s' for k, v in times.items())}")
    print(f"total {sum(times.values()):.0f} s (train {times['train']:.0f} s)")
    for name, s in (("init", before), ("round 0", after)):
        print(
            f"{name}: IF-818 prompt-level {s['prompt']:.1%} ({s['passed']}/{s['n']}), "
            f"check-level {s['check']:.1%}"
        )
    base = max(before["prompt"], 1 / before["n"])  # a 0 % baseline counts as one pass
    print(f"ratio round 0 / untrained (prompt-level): {after['prompt'] / base:.1f}x")
    print("per check type, round 0 (passing/carrying):", json.dumps(after["by_type"]))
    print(compare.stdout.strip() or compare.stderr.strip())


if __name__ == "__main__":
    main()
