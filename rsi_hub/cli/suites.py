"""`rsi-hub suites`: build the suite files, print their check counts, audit for overlaps."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `suites build | stats | audit`."""
    parser = subparsers.add_parser(
        "suites",
        help="build, inspect and audit the evaluation suites",
        description="The evaluation suites as data (tasks/lm_eval/data): IF-818, IF263, IF-3k, "
        "EV4, the PREF demo and the generation pool.",
    )
    sub = parser.add_subparsers(dest="suites_command", metavar="ACTION", required=True)

    build = sub.add_parser(
        "build",
        help="regenerate the suite files and their SHA256SUMS",
        description="Regenerate every suite file. Files whose bytes would change are never "
        "replaced without --force.",
    )
    build.add_argument(
        "--out", type=Path, default=None, help="output folder (default: the data folder)"
    )
    build.add_argument("--force", action="store_true", help="replace files that differ")
    build.set_defaults(func=_build)

    stats = sub.add_parser(
        "stats",
        help="per-check-type counts of a suite",
        description="Print, per check type, the number of prompts carrying it and of checks.",
    )
    stats.add_argument("name", help="a suite name (if818, if263, if3k, ev4) or a suite file path")
    stats.add_argument("--json", action="store_true", help="print JSON instead of a table")
    stats.set_defaults(func=_stats)

    audit = sub.add_parser(
        "audit",
        help="check every pair of pool, IF-818, IF263 and IF-3k for overlaps (exit 1 if any)",
        description="Exact normalised matches and near-duplicates (word 8-gram overlap >= 0.5) "
        "between every pair of the generation pool and the held-out suites.",
    )
    audit.add_argument(
        "--pool-size",
        type=int,
        default=None,
        metavar="N",
        help="audit only pool ids below N (default: the whole pool)",
    )
    audit.set_defaults(func=_audit)


def _build(args: argparse.Namespace) -> int:
    from rsi_hub.suites import data_dir, write_suite_files

    out = args.out or data_dir()
    for name, status in write_suite_files(out, force=args.force, progress=True):
        print(f"{status:>9}  {out / name}")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from rsi_hub.suites import format_stats, load_suite, suite_stats

    suite = load_suite(args.name)
    stats = suite_stats(suite.rows)
    if args.json:
        print(json.dumps({"suite": suite.name, "sha256": suite.sha256, **stats}, indent=2))
    else:
        print(format_stats(suite.name, stats))
    return 0


def _audit(args: argparse.Namespace) -> int:
    from rsi_hub.suites import audit

    report = audit(progress=True) if args.pool_size is None else audit(args.pool_size, True)
    print(report.format())
    return 0 if report.clean else 1
