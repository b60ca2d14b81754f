"""`rsi-hub runs`: the table of arms (card section 3) from run directories and their eval/."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "runs",
        help="table of arms: suites, paired p against an incumbent, guards (card section 3)",
        description=(
            "One row per run directory under DIR (or DIR itself): what changed (from "
            "training_evidence.json or a sweep manifest), the score on each suite from "
            "RUN/eval/<suite>/, the exact paired McNemar p against --incumbent on the primary "
            "suite (as `rsi-hub compare`) and whether the acceptance rule's guards hold. "
            "--markdown prints the table a release card embeds."
        ),
    )
    parser.add_argument("dir", nargs="?", default="runs", metavar="DIR", help="default: runs")
    parser.add_argument(
        "--suite",
        action="append",
        dest="suites",
        metavar="SUITE",
        help="suite column (repeatable; default if818 if263 ev4 pref mmlu)",
    )
    parser.add_argument(
        "--incumbent", metavar="RUN", help="run (path or name in DIR) to test against"
    )
    parser.add_argument("--primary", default="if818", help="suite of the paired test (if818)")
    parser.add_argument(
        "--sweep",
        metavar="SWEEP",
        help="sweep.json (or its folder): all its arms, with their overrides and, for a "
        "submitted sweep, their Slurm jobs' states (an evaluation that never ran says why)",
    )
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.errors import RsiHubError
    from rsi_hub.experiments import runs_table, sweep
    from rsi_hub.experiments.job_states import arm_job_states

    root = Path(args.dir)
    points = job_states = None
    if args.sweep:
        # Every arm of the sweep, also one whose job failed before its run folder existed.
        manifest = sweep.read_manifest(args.sweep)
        points = manifest.points
        job_states = arm_job_states(manifest.arms)
        runs = [
            root / a.name if (root / a.name).is_dir() else Path(a.run_dir) for a in manifest.arms
        ]
    else:
        runs = runs_table.discover_runs(root)
    incumbent = None
    if args.incumbent:
        incumbent = Path(args.incumbent)
        # A bare name is a run in DIR first (the table's own arm), a path where it points.
        in_root = root / args.incumbent
        if in_root.is_dir() and (not incumbent.is_dir() or len(incumbent.parts) == 1):
            incumbent = in_root
        if not incumbent.is_dir():
            raise RsiHubError(f"--incumbent {args.incumbent}: no such run directory")
        if all(r.resolve() != incumbent.resolve() for r in runs):
            runs = [incumbent, *runs]
    if not runs:
        raise RsiHubError(f"no run directories under {root}")
    suites = args.suites or list(runs_table.DEFAULT_SUITES)
    rows = runs_table.build_rows(
        runs,
        suites=suites,
        incumbent=incumbent,
        primary=args.primary,
        sweep_points=points,
        job_states=job_states,
    )
    print(
        runs_table.format_runs_table(
            rows,
            suites=suites,
            incumbent=incumbent.name if incumbent else None,
            markdown=args.markdown,
        ),
        end="",
    )
    return 0
