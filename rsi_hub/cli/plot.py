"""`rsi-hub plot`: PNG figures (dose-response curve, failure profile) for write-ups and cards."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plot",
        help="PNG figures: dose-response with 95 %% intervals, failure profile per check type",
        description="Draw experiment figures from run directories (matplotlib, PNG).",
    )
    kinds = parser.add_subparsers(dest="figure", metavar="FIGURE", required=True)

    dose = kinds.add_parser(
        "dose-response",
        help="a suite's pass rate against a swept setting, with 95 %% intervals",
        description=(
            "Pass rate on --suite against the swept setting --x of each run (read from the "
            "sweep manifest, else from training_evidence.json), with 95 %% Wilson or bootstrap "
            "intervals and, with --reference, the incumbent as a line and band."
        ),
    )
    dose.add_argument("runs", nargs="*", metavar="RUN", help="run directories (or use --sweep)")
    dose.add_argument("--x", required=True, metavar="KEY", help="swept setting, e.g. max_steps")
    dose.add_argument("--sweep", help="sweep.json or its folder: its arms and their settings")
    dose.add_argument("--suite", default="if818", help="suite (default if818)")
    dose.add_argument("--interval", choices=("wilson", "bootstrap"), default="wilson")
    dose.add_argument("--reference", metavar="RUN", help="incumbent drawn as a reference line")
    dose.add_argument("--title", help="figure title")
    dose.add_argument("--out", required=True, help="PNG file to write")
    dose.set_defaults(func=run_dose)

    fail = kinds.add_parser(
        "failures",
        help="failing prompts per check type for one or two runs side by side",
        description=(
            "Card section 5's failure profile from the checker's failure analysis of each "
            "run's logged answers on --suite (as `rsi-hub failures`)."
        ),
    )
    fail.add_argument("runs", nargs="+", metavar="RUN", help="one or two run directories")
    fail.add_argument("--suite", default="if818", help="checked suite (default if818)")
    fail.add_argument("--title", help="figure title")
    fail.add_argument("--out", required=True, help="PNG file to write")
    fail.set_defaults(func=run_failures)


def run_dose(args: argparse.Namespace) -> int:
    from rsi_hub.errors import RsiHubError
    from rsi_hub.experiments import plots, sweep

    runs = [Path(r) for r in args.runs]
    points = None
    if args.sweep:
        manifest = sweep.read_manifest(args.sweep)
        points = manifest.points
        if not runs:
            runs = [Path(arm.run_dir) for arm in manifest.arms]
    if not runs:
        raise RsiHubError("give run directories or --sweep.")
    data = plots.dose_points(runs, suite=args.suite, x_key=args.x, sweep_points=points)
    reference = plots.reference_point(Path(args.reference), args.suite) if args.reference else None
    out = plots.plot_dose_response(
        data,
        args.out,
        x_label=args.x,
        metric_label=f"{args.suite} pass rate",
        interval=args.interval,
        reference=reference,
        title=args.title,
    )
    for p in sorted(data, key=lambda p: p.x):
        print(f"{p.label}: {args.x}={p.x:g} {p.passes}/{p.n}")
    print(f"wrote {out}")
    return 0


def run_failures(args: argparse.Namespace) -> int:
    from rsi_hub.experiments import plots

    profiles = plots.failure_profiles([Path(r) for r in args.runs], args.suite)
    out = plots.plot_failure_profile(profiles, args.out, suite_label=args.suite, title=args.title)
    print(f"wrote {out}")
    return 0
