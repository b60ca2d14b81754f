"""`rsi-hub rescore`: re-judge logged answers with the current checker."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `rsi-hub rescore`."""
    parser = subparsers.add_parser(
        "rescore",
        help="re-judge the answers logged under RUN/eval/<suite>/ with the current checker",
        description=(
            "Re-judge the answers logged in RUN/eval/<suite>/samples_*.jsonl with the checker "
            "installed now: no model is loaded and nothing is generated. Writes a new complete "
            "RUN/eval/<suite>/ bound to the current checker version and the same weights "
            "hash, keeps the folder it replaces under RUN/eval/.superseded/<suite>.checker-"
            "<old version>/, and prints the verdicts that flipped, by check type. This is how a "
            "checker fix reaches numbers scored before it."
        ),
    )
    parser.add_argument("run", metavar="RUN", help="run directory")
    parser.add_argument(
        "--suite",
        default="if818",
        metavar="S",
        help="folder under RUN/eval/ to rescore: if818, if263, if3k, ev4 or a candidate "
        "prompt's folder (default if818)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Rescore and print the flips."""
    from rsi_hub.evaluate.rescore import format_rescore, rescore_suite

    print(format_rescore(rescore_suite(args.run, args.suite, progress=print)))
    return 0
