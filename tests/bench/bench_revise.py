"""Benchmark: verify-and-revise vs plain serving on IF-818, paired on the same documents.

Scores the run's first N IF-818 prompts twice, through the real commands' code:

- plain: `evaluate_run(EvalConfig(RUN, "if818", limit=N))` (the served configuration, lm-eval),
  written to `RUN/eval/if818/`; an existing plain eval of the same limit and generation limit
  is reused instead (a full one is never overwritten by a limited one: then pass --copy);
- revise: `evaluate_run(EvalConfig(RUN, "if818", limit=N, revise=K))`, written to
  `RUN/eval/if818.revise-K/`.

Prints the prompt-level pass rates (every check of the prompt), the check-level pass rates
(checks passed / checks, re-judged by `rsi_hub.checker` on each kept answer), the tokens each
protocol generated, the paired exact McNemar test from `rsi-hub compare --revise K` and the
ratio revise / plain. The tiny model's figures are all about 0; the figure that matters is on a
trained model:

    python tests/bench/bench_revise.py --run runs/nano [--limit 818] [--rounds 3]
    python tests/bench/bench_revise.py --run /tmp/tiny --limit 16 --rounds 2 --max-gen-toks 16
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# Benchmark the checkout this script lives in, whichever rsi-hub is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _plain_reusable(run: Path, limit: int | None, max_gen_toks: int | None) -> bool:
    from rsi_hub.chat import MAX_NEW_TOKENS
    from rsi_hub.evaluate.store import has_suite_dir, read_suite_dir

    if not has_suite_dir(run, "if818"):
        return False
    meta = read_suite_dir(run, "if818").meta
    gen = (meta.generation or {}).get("max_gen_toks")
    return meta.limit == limit and gen == (max_gen_toks or MAX_NEW_TOKENS)


def _check_rate(folder: Path) -> tuple[int, int]:
    """(checks passed, checks) over the kept answers of an eval folder."""
    from rsi_hub.checker import check

    passed = total = 0
    for line in (folder / "samples_if818.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        verdict = check(row["filtered_resps"][0], row["doc"]["checks"])
        passed += sum(r.passed for r in verdict.results)
        total += len(verdict.results)
    return passed, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", required=True, type=Path, help="run directory to score")
    parser.add_argument("--limit", type=int, default=None, help="first N prompts (default all)")
    parser.add_argument("--rounds", type=int, default=3, help="answers per prompt (default 3)")
    parser.add_argument(
        "--max-gen-toks", type=int, default=None, help="NOT served: a token limit for tiny runs"
    )
    parser.add_argument(
        "--copy", action="store_true", help="score a copy of RUN in a temporary folder"
    )
    args = parser.parse_args()

    from rsi_hub.evaluate import EvalConfig, evaluate_run
    from rsi_hub.evaluate.compare import compare_runs
    from rsi_hub.evaluate.revise_eval import format_tokens, revise_folder
    from rsi_hub.rundir import EvalMeta

    scratch = None
    run = args.run
    if args.copy:
        scratch = Path(tempfile.mkdtemp(prefix="bench_revise_"))
        run = scratch / "run"
        shutil.copytree(args.run, run, ignore=shutil.ignore_patterns("eval"))
    try:
        common = {"limit": args.limit, "max_gen_toks": args.max_gen_toks}
        started = time.perf_counter()
        if _plain_reusable(run, args.limit, args.max_gen_toks):
            print(f"plain: reusing {run}/eval/if818/")
        else:
            evaluate_run(EvalConfig(run, "if818", **common), progress=print)
        plain_s = time.perf_counter() - started
        started = time.perf_counter()
        evaluate_run(EvalConfig(run, "if818", revise=args.rounds, **common), progress=print)
        revise_s = time.perf_counter() - started

        c = compare_runs(run, run, revise_b=args.rounds)
        plain_dir, revise_dir = (
            run / "eval" / "if818",
            run / "eval" / revise_folder("if818", args.rounds),
        )
        plain_checks, revise_checks = _check_rate(plain_dir), _check_rate(revise_dir)
        tokens = EvalMeta.read(revise_dir).extra["tokens"]
        plain_rate, revise_rate = c.a / c.n, c.b / c.n
        print(f"\nIF-818, {c.n} prompts, verify-and-revise up to {args.rounds} answers")
        print(f"  prompt-level: plain {c.a}/{c.n} ({100 * plain_rate:.2f} %), revise {c.b}/{c.n} "
              f"({100 * revise_rate:.2f} %)")  # fmt: skip
        for name, (passed, total) in (("plain", plain_checks), ("revise", revise_checks)):
            print(f"  check-level {name}: {passed}/{total} ({100 * passed / max(total, 1):.2f} %)")
        print(f"  discordant: plain only {c.a_only}, revise only {c.b_only}; exact McNemar p = "
              f"{c.mcnemar_p:.4g}")  # fmt: skip
        print(f"  {format_tokens(tokens)}")
        print(f"  wall: plain {plain_s:.1f} s, revise {revise_s:.1f} s")
        ratio = f"{revise_rate / plain_rate:.3f}" if plain_rate else "n/a (plain passes none)"
        print(f"ratio revise / plain (prompt-level pass rate): {ratio}")
        print(f"verdict: {c.verdict}")
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
