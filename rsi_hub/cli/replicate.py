"""`rsi-hub replicate nano`: the card's method in miniature, end to end, resumable."""

from __future__ import annotations

import argparse

from rsi_hub.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from rsi_hub.experiments.replicate_config import ReplicateConfig


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `rsi-hub replicate`; its options are generated from `ReplicateConfig`'s fields."""
    parser = subparsers.add_parser(
        "replicate",
        help="the CPU replication: teacher SFT, one RFT round, eval, compare, release (nano)",
        description=(
            "Run the card's method at CPU scale, every stage through rsi-hub's own code: split "
            "the generation pool into round-0 and fresh prompts; the teacher (the suites' "
            "reference responder) answers round 0's, checker-verified; build the nano init; "
            "prep (k0, served template, holdout guard) and train round 0 (recipe nano); sample "
            "K answers per fresh prompt from round 0 and keep checker passes (synth rft); prep "
            "and train round 1 (recipe nano_rft); evaluate init, round 0 and round 1 on IF-818 "
            "in the served configuration (and IF263, EV4 as guards); compare round 0 vs init "
            "and round 1 vs round 0 under release/nano/guards.yaml; tabulate failures; state "
            "what IF-818 and IF-3k can detect (power); release the winner with its card. "
            "Re-running skips every stage whose recorded outputs still hash as recorded "
            "(OUT/replicate.json); a changed setting redoes that stage and what reads it."
        ),
        epilog="Example: rsi-hub replicate nano --out runs/nano --minutes 20 --init-limit 100",
    )
    add_dataclass_arguments(parser, ReplicateConfig)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the replication; print the summary table."""
    from rsi_hub.experiments.replicate import replicate
    from rsi_hub.experiments.replicate_report import format_summary

    result = replicate(dataclass_from_args(ReplicateConfig, args))
    print(format_summary(result))
    return 0
