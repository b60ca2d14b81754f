"""`rsi-hub compare`: paired statistics of two runs and the card's acceptance rule."""

from __future__ import annotations

import argparse
import sys


def _threshold(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    try:
        if not sep:
            raise ValueError
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected SUITE=VALUE, e.g. if263=193; got {text!r}"
        ) from None


def register(subparsers: argparse._SubParsersAction) -> None:
    from rsi_hub.evaluate.protocol import SUITES

    parser = subparsers.add_parser(
        "compare",
        help="paired McNemar test, bootstrap CI and the acceptance rule for two runs",
        description=(
            "Join the per-document logs of RUN_A (incumbent) and RUN_B (candidate) under "
            "RUN/eval/<task>/ on document id (refusing when a document's content differs), and "
            "print both scores, the discordant counts, the exact McNemar p, a seeded paired "
            "bootstrap 95 % CI of B - A in points, B's guards (IF263 >= 193, MMLU >= 0.71, "
            "EV4 >= 104, PREF >= 0.618, from full runs of B) and a one-line verdict: ACCEPT "
            "needs every guard and a paired-significant gain of B."
        ),
    )
    parser.add_argument("run_a", metavar="RUN_A", help="incumbent run directory")
    parser.add_argument(
        "run_b",
        metavar="RUN_B",
        nargs="?",
        help="candidate run directory (with --revise: defaults to RUN_A)",
    )
    parser.add_argument(
        "--task", choices=tuple(SUITES), default="if818", help="suite to pair (default if818)"
    )
    parser.add_argument(
        "--revise",
        type=int,
        metavar="K",
        help="pair RUN_B's verify-and-revise eval (RUN_B/eval/<task>.revise-K/, from `rsi-hub "
        "eval --revise K`) against RUN_A's plain served eval of the same weights; reports the "
        "gain of the protocol, no acceptance verdict",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--guard",
        type=_threshold,
        action="append",
        default=[],
        metavar="SUITE=VALUE",
        help="change a guard threshold, e.g. --guard if263=190 (repeatable)",
    )
    parser.add_argument(
        "--guards",
        metavar="FILE",
        help="the guards, thresholds and alpha of a scale from a guards file instead of the "
        "card's, e.g. release/nano/guards.yaml (the CPU replication: IF263 and EV4 only)",
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=None,
        help="significance level of the gain (default 0.05, or the guards file's)",
    )
    parser.add_argument(
        "--bootstrap-iters", type=int, default=10_000, help="bootstrap resamples (default 10000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from rsi_hub.evaluate.compare import (
        AcceptanceRule,
        compare_runs,
        format_comparison,
        load_guard_rule,
    )

    if args.run_b is None and args.revise is None:
        print(
            "rsi-hub compare: error: pass RUN_B, or --revise K to pair RUN_A's verify-and-revise "
            "eval with its plain one.",
            file=sys.stderr,
        )
        return 2
    base = load_guard_rule(args.guards) if args.guards else AcceptanceRule()
    if args.alpha is not None:
        base = AcceptanceRule(base.guards, args.alpha)
    rule = base.with_thresholds(dict(args.guard))
    comparison = compare_runs(
        args.run_a,
        args.run_b or args.run_a,
        task=args.task,
        rule=rule,
        bootstrap_iters=args.bootstrap_iters,
        seed=args.seed,
        revise_b=args.revise,
    )
    for warning in comparison.warnings:
        print(f"rsi-hub compare: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(comparison.to_json(), indent=2))
    else:
        print(format_comparison(comparison))
    return 0
