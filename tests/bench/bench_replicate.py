"""Benchmark: the CPU replication (issue 14), end to end: `rsi-hub replicate nano`.

Runs `rsi-hub replicate nano --out OUT [options]` as one subprocess (every stage through
rsi-hub's own code: teacher synth, nano init, prep, round-0 SFT, round-1 RFT sampling and SFT,
IF-818 / IF263 / EV4 evaluations, compare, failures, power, release of the winner), then reads
its records back and prints every target figure of issue 14:

- round 0's IF-818 prompt-level pass rate against the 40 % target and the 60 % aim;
- round 1 vs round 0: exact McNemar p (target < 0.05) and `compare`'s verdict (target ACCEPT);
- the whole call's wall time against the 20-minute target and the 15-minute stretch (the sum
  of the stages' walls is larger: the evaluations of the init and round 0 run beside training);
- prompt- and check-level rates of every model and their ratio to the untrained baseline.

Re-running with the same OUT skips verified stages: pass a fresh OUT (or delete it) to time a
whole run. Wall times are those each stage took when it ran (OUT/replicate.json). Run by hand:

    python tests/bench/bench_replicate.py [--out runs/nano] [--init-limit N] [-- OPTIONS]

where OPTIONS are passed on to `rsi-hub replicate nano` (e.g. --round0-set max_steps=200).
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

TARGET_ROUND0, AIM_ROUND0 = 0.40, 0.60
TARGET_MINUTES, STRETCH_MINUTES = 20, 15
ALPHA = 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="runs/nano", help="the replication's folder")
    parser.add_argument(
        "--init-limit", default=None, help="IF-818 prompts for the init (default: all 818)"
    )
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="-- then rsi-hub replicate options")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    extra = [a for a in args.rest if a != "--"]
    limit = ["--init-limit", args.init_limit] if args.init_limit else []
    command = [sys.executable, "-m", "rsi_hub", "replicate", "nano", "--out", str(out),
               *limit, *extra]  # fmt: skip
    start = time.perf_counter()
    with (out / "bench.log").open("a") as log:
        log.write(f"\n$ {' '.join(command)}\n")
        log.flush()
        offset = log.tell()
        code = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT)
    with (out / "bench.log").open() as log:
        log.seek(offset)
        fresh = "outputs verified; skipped" not in log.read()
    wall = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"rsi-hub replicate failed with exit {code}; see {out / 'bench.log'}")

    from rsi_hub.experiments.replicate_report import scores
    from rsi_hub.rundir import ReplicateLedger

    ledger = ReplicateLedger.read_if_any(out)
    assert ledger is not None, "rsi-hub replicate wrote no ledger"
    stages = {name: float(record["wall_s"]) for name, record in ledger.stages.items()}
    figures = {m: scores(out / m) for m in ("init", "round0", "round1")}
    compare = {
        name: json.loads((out / "compare" / f"{name}.json").read_text())
        for name in ("round0_vs_init", "round1_vs_round0")
    }
    total = sum(stages.values())
    (out / "bench.json").write_text(
        json.dumps(
            {"stage_wall_s": stages, "this_call_s": wall, "scores": figures, "compare": compare},
            indent=2,
        )
    )
    print("stage wall times (when each ran):")
    for name, seconds in stages.items():
        print(f"  {name:<16} {seconds:8.1f} s")
    print(
        f"this call {wall / 60:.1f} min (target <= {TARGET_MINUTES}: "
        f"{'met' if wall <= TARGET_MINUTES * 60 else 'MISSED'}; stretch {STRETCH_MINUTES}: "
        f"{'met' if wall <= STRETCH_MINUTES * 60 else 'missed'}"
        f"{'' if fresh else '; stages were skipped: time a fresh OUT'}); "
        f"sum of stage walls {total / 60:.1f} min"
    )
    base = figures["init"]
    for model, s in figures.items():
        ratio = s["prompt"] / max(base["prompt"], 1 / base["n"])  # a 0 % baseline counts as one
        print(
            f"{model}: IF-818 prompt-level {s['prompt']:.1%} ({s['passed']}/{s['n']}), "
            f"check-level {s['check']:.1%} ({s['check_passed']}/{s['check_n']}); "
            f"{ratio:.1f}x the untrained baseline (prompt level)"
        )
    r0 = figures["round0"]["prompt"]
    print(
        f"round 0 vs targets: {r0:.1%} against {TARGET_ROUND0:.0%} "
        f"({'met' if r0 >= TARGET_ROUND0 else f'missed by {100 * (TARGET_ROUND0 - r0):.1f} points'})"
        f" and the {AIM_ROUND0:.0%} aim ({'met' if r0 >= AIM_ROUND0 else 'missed'})"
    )
    for name, c in compare.items():
        met = "met" if c["accepted"] is True and c["mcnemar_p"] < ALPHA else "MISSED"
        print(f"{name}: McNemar p = {c['mcnemar_p']:.3g} (target < {ALPHA}: {met}); {c['verdict']}")
    print("per check type, round 0 (passing/carrying):", json.dumps(figures["round0"]["by_type"]))
    print("per check type, round 1 (passing/carrying):", json.dumps(figures["round1"]["by_type"]))


if __name__ == "__main__":
    main()
