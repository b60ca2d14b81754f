"""`rsi-hub demo`: the README's main job, a short replication that shows a real gain."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    from rsi_hub.experiments.signal import SIGNAL_EVAL_PROMPTS, SIGNAL_STEPS

    parser = subparsers.add_parser(
        "demo",
        help="the main job: a short nano replication (round 0) that shows a real, paired gain",
        description=(
            "Run round 0 of the nano replication at a small budget, on a CPU, in a few minutes: "
            "the teacher's checker-verified answers for generation-pool prompts, a random-init "
            "nano nemotron_h, SFT with k0 and the served template, then IF-818 for the untrained "
            "init and for round 0 on the same held-out prompts, paired at prompt and check level "
            "(exact McNemar). Round 0 is released to a local folder (staged and validated) and "
            "transformers.pipeline answers an IF-818 prompt it passed, printing the checker's "
            "checklist. Everything is written under OUT, which each run replaces. The full "
            "replication (two rounds, full suites, guards, card) is `rsi-hub replicate nano`."
        ),
    )
    parser.add_argument(
        "--out", default="runs/demo", help="the demo's folder (default runs/demo; replaced)"
    )
    parser.add_argument(
        "--message",
        default=None,
        help="the prompt answered at the end (default: an IF-818 prompt round 0 passed)",
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=None,
        help=f"round 0's SFT steps of 16 rows (default {SIGNAL_STEPS})",
    )
    parser.add_argument(
        "--eval-prompts",
        type=int,
        default=None,
        help=f"IF-818 prompts both models are scored on (default {SIGNAL_EVAL_PROMPTS})",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.demo import run_demo

    run_demo(args.out, message=args.message, steps=args.steps, eval_prompts=args.eval_prompts)
    return 0
