"""`rsi-hub power`: the gain the acceptance rule can detect on a suite, or the suite it needs."""

from __future__ import annotations

import argparse
import json

from rsi_hub.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `rsi-hub power`; its options are generated from `PowerConfig`'s fields."""
    from rsi_hub.evaluate.power_report import PowerConfig

    parser = subparsers.add_parser(
        "power",
        help="minimum detectable paired gain on a suite, or the prompts a gain needs",
        description=(
            "Exact power of the acceptance rule's paired test (exact McNemar, two-sided, B-only "
            "wins outnumbering A-only wins) for a suite of N prompts at baseline pass rate P0, "
            "with the normal approximation beside it. Paired outcomes follow a stated model: by "
            "default the candidate fails --flip-rate of the prompts the baseline passes and wins "
            "as many plus the gain; --independent drops the pairing (the conservative bound). "
            "Example: rsi-hub power --suite if818 --baseline 0.566 --gain 0.03"
        ),
    )
    add_dataclass_arguments(parser, PowerConfig)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the report as a table, or as JSON with --json."""
    from rsi_hub.evaluate.power_report import PowerConfig, format_power, power_report

    config = dataclass_from_args(PowerConfig, args)
    report = power_report(config)
    print(json.dumps(report.to_json(), indent=2) if config.json else format_power(report))
    return 0
