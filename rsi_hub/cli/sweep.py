"""`rsi-hub sweep`: expand a grid of recipe overrides into arms; train and evaluate each."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="train and evaluate a grid of recipe overrides (e.g. the LENARM dose-response)",
        description=(
            "Expand --grid options into arms (every combination), validate each arm's "
            "overrides with the recipe loader, then either train and evaluate them one after "
            "another here, or (--slurm) write one sbatch script per arm (train's Slurm template, "
            "which also queues `train finalize`) and submit it with its evaluation queued "
            "afterok. Without sbatch on "
            "the PATH the scripts are written and the submissions printed. The arms, their "
            "overrides and job ids go to SWEEP_DIR/sweep.json, which `rsi-hub runs` and "
            "`rsi-hub plot dose-response` read."
        ),
    )
    parser.add_argument("--recipe", required=True, help="recipe name or YAML path (as train)")
    parser.add_argument(
        "--grid",
        action="append",
        required=True,
        metavar="KEY=V1,V2,...",
        help="a swept recipe key and its values, e.g. max_steps=100,200,300 (repeatable; "
        "lr and steps are short for learning_rate and max_steps)",
    )
    parser.add_argument(
        "--set",
        dest="fixed",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an override applied to every arm (repeatable)",
    )
    parser.add_argument("--name", help="run-name template with grid keys, e.g. LENARM{max_steps}")
    parser.add_argument(
        "--suite",
        action="append",
        dest="suites",
        metavar="SUITE",
        help="suite to evaluate each arm on (repeatable; default if818)",
    )
    parser.add_argument(
        "--eval-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra rsi-hub eval argument, e.g. --eval-arg=--backend --eval-arg=vllm (repeatable)",
    )
    parser.add_argument("--sweep-dir", help="where scripts and sweep.json go (sweeps/<name>)")
    parser.add_argument("--slurm", action="store_true", help="write and submit sbatch scripts")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the arms and commands, run nothing"
    )
    slurm = parser.add_argument_group("Slurm (with --slurm)")
    slurm.add_argument("--time", default="04:00:00", help="training job time limit")
    slurm.add_argument("--eval-time", default="02:00:00", help="evaluation job time limit")
    slurm.add_argument(
        "--eval-gpus", type=int, default=1, help="GPUs per evaluation job (a CPU recipe: none)"
    )
    slurm.add_argument("--partition", help="Slurm partition")
    slurm.add_argument("--account", help="Slurm account")
    slurm.add_argument(
        "--sbatch-option",
        action="append",
        default=[],
        metavar="OPTION",
        help="extra #SBATCH line, e.g. --sbatch-option=--qos=high (repeatable)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os
    import re
    import shlex

    from rsi_hub.experiments import recipes, sweep

    grid = sweep.parse_grid(args.grid)
    arms = sweep.plan_sweep(
        args.recipe,
        grid,
        fixed=recipes.parse_overrides(args.fixed) if args.fixed else {},
        name_template=args.name,
        suites=args.suites or list(sweep.DEFAULT_SUITES),
        eval_args=args.eval_arg,
    )
    # LENARM{max_steps} -> sweeps/LENARM: the template without its placeholders.
    sweep_name = re.sub(r"\{[^}]*\}", "", args.name).strip("_-") if args.name else None
    default_dir = Path("sweeps") / (sweep_name or "_".join([Path(args.recipe).stem, *grid]))
    sweep_dir = Path(args.sweep_dir) if args.sweep_dir else default_dir
    for arm in arms:
        print(
            f"{arm.name}: {' '.join(f'{k}={v}' for k, v in arm.overrides.items())} -> {arm.run_dir}"
        )
    if args.dry_run:
        for arm in arms:
            for argv in [arm.train_argv(), arm.eval_argv()]:
                print(f"  rsi-hub {shlex.join(argv)}")
        return 0
    if args.slurm:
        opts = sweep.SlurmOptions(
            time=args.time,
            eval_time=args.eval_time,
            eval_gpus=args.eval_gpus,
            partition=args.partition,
            account=args.account,
            extra=tuple(args.sbatch_option),
            workdir=os.getcwd(),
        )
        scripts = sweep.write_scripts(arms, sweep_dir, opts)
        submitted = sweep.submit(arms, scripts)
        mode = "slurm" if submitted else "slurm (not submitted: no sbatch here)"
    else:
        mode = "local"
        sweep.write_manifest(sweep_dir, args.recipe, grid, arms, mode)
        sweep.run_local(arms)
    path = sweep.write_manifest(sweep_dir, args.recipe, grid, arms, mode)
    print(f"sweep manifest: {path}")
    return 0
