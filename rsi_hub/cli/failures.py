"""`rsi-hub failures`: where a run loses checks (card section 5's table)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    from rsi_hub.evaluate.failures import CHECKED_SUITES

    parser = subparsers.add_parser(
        "failures",
        help="per check type: prompts carrying it, failing it, miss rate (card section 5)",
        description=(
            "Re-judge the answers logged under RUN/eval/<task>/ with the checker and print card "
            "section 5's table: prompt pass count, and per check type the prompts carrying it, "
            "the prompts failing it and the miss rate, plus the word_eq near-miss profile."
        ),
    )
    parser.add_argument("run", metavar="RUN", help="run directory evaluated with `rsi-hub eval`")
    parser.add_argument(
        "--task", choices=CHECKED_SUITES, default="if818", help="suite (default if818)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from rsi_hub.evaluate.failures import failure_report

    report = failure_report(args.run, args.task)
    print(json.dumps(report.to_json(), indent=2) if args.json else report.render(), end="")
    if args.json:
        print()
    return 0
