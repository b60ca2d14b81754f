"""`rsi-hub check FILE.jsonl [--responses R.jsonl] [--json]`: judge responses with the checker.

Prints the prompt-level pass rate and card §5's failure table (or, with --json, one JSON object
with keys n, passed, by_type and word_eq_delta). A bad row stops the run with its file, line
and field (exit code 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tqdm import tqdm

from rsi_hub.checker import check, failure_analysis, render_failure_table
from rsi_hub.checker.files import RowError, load_judge_rows
from rsi_hub.errors import RsiHubError

# Files with at least this many rows get a progress bar (on stderr, and only on a terminal).
PROGRESS_MIN_ROWS = 1000


class CheckInputError(RsiHubError):
    """An input file of `rsi-hub check` has a bad row; the message names file, line and field."""


def register(subparsers: Any) -> None:
    """Add the `check` sub-command."""
    p = subparsers.add_parser(
        "check",
        help="judge responses against their constraints; print card §5's failure table",
        # The docstring's first line repeats the usage line argparse prints itself.
        description=__doc__.split("\n", 1)[1].strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "file",
        metavar="FILE.jsonl",
        help="rows of id, response, checks; or, with --responses, a suite file of id, checks",
    )
    p.add_argument(
        "--responses",
        metavar="R.jsonl",
        help="rows of id, response, joined on id with the suite FILE",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load, judge, analyse, print; exit code 0, or 2 on bad input."""
    try:
        rows = load_judge_rows(args.file, args.responses)
    except RowError as err:
        raise CheckInputError(str(err)) from err
    if not rows:
        # Exit 0 with an empty table would read as "judged, nothing failed".
        raise CheckInputError(
            f"{args.file}: no rows to judge (the file is empty or only blank lines); pass a "
            "JSONL file with one row per response."
        )
    bar = tqdm(
        rows,
        desc="checking",
        unit="row",
        file=sys.stderr,
        disable=True if len(rows) < PROGRESS_MIN_ROWS else None,
    )
    analysis = failure_analysis((row.checks, check(row.response, row.checks)) for row in bar)
    if args.json:
        print(json.dumps(analysis.to_json()))
    else:
        sys.stdout.write(render_failure_table(analysis))
    return 0
