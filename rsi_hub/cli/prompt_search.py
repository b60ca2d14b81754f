"""`rsi-hub prompt-search`: the card's system-prompt search with paired, Holm-corrected tests."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prompt-search",
        help="evaluate candidate system prompts on the same items and test them against k0",
        description=(
            "Evaluate every candidate system prompt on the same suite items (through rsi-hub "
            "eval; results under RUN/eval/<suite>.prompt-<id>/, reused when the weights have "
            "not changed), then print the card's section 3 prompt table: score, exact paired "
            "McNemar p against the incumbent, Holm-corrected for the number of candidates, and "
            "a verdict per row."
        ),
    )
    parser.add_argument("run", metavar="RUN", help="run directory whose weights are scored")
    parser.add_argument(
        "--candidates",
        required=True,
        metavar="FILE_OR_DIR",
        help="a candidate .txt file or a folder of them (e.g. templates/prompt_candidates)",
    )
    parser.add_argument("--suite", default="if818", help="suite to score on (default if818)")
    parser.add_argument("--incumbent", default="k0", help="candidate id to test against (k0)")
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="family-wise error rate (default 0.05)"
    )
    parser.add_argument("--no-reuse", action="store_true", help="evaluate every candidate again")
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="score only the first N items (a smoke test; the table is then not the card's)",
    )
    parser.add_argument(
        "--backend", choices=("hf", "vllm"), default="hf", help="as for rsi-hub eval (default hf)"
    )
    parser.add_argument(
        "--batch-size", type=int, default=None, metavar="B", help="as for rsi-hub eval"
    )
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.evaluate.config import EvalConfig
    from rsi_hub.experiments.prompts import format_prompt_table, load_candidates, run_prompt_search

    # Fail before loading candidates, through the one place eval options are checked.
    EvalConfig(run=args.run, suite=args.suite, limit=args.limit)
    rows = run_prompt_search(
        args.run,
        load_candidates(args.candidates),
        suite=args.suite,
        incumbent=args.incumbent,
        alpha=args.alpha,
        reuse=not args.no_reuse,
        limit=args.limit,
        backend=args.backend,
        batch_size=args.batch_size,
        progress=lambda line: print(line, file=sys.stderr),
    )
    print(format_prompt_table(rows, markdown=args.markdown), end="")
    return 0
