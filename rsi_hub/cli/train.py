"""`rsi-hub train sft|simpo|rlvr|finalize|recipes`: run a training recipe (TRL + accelerate)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rsi_hub.train.recipes import TrainRecipe

# `train rlvr --help`: rollouts on generation-pool prompts as served (k0); the reward is
# reward_pass_weight x (all checks passed) + reward_fraction_weight x (fraction passed).
RLVR_DETAILS = " Reward: reward_pass_weight x all passed + reward_fraction_weight x share passed."


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train",
        help=(
            "train with a recipe: TRL SFTTrainer (sft), CPOTrainer with SimPO loss (simpo) or "
            "GRPOTrainer with the checker as reward (rlvr)"
        ),
        description=(
            "Run a training recipe (card sections 2-3, 6) into its run directory runs/NAME: "
            "prepare its data mix (RLVR: select its prompts), train with FP32 master weights and "
            "BF16 Adam moments, write the final weights, tokenizer, serving files and "
            "training_evidence.json. Relaunching the same command resumes from the last "
            "checkpoint. A multi-GPU recipe started without a launcher re-executes itself "
            "under `accelerate launch` with the recipe's config."
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for trainer, help_text, details in (
        ("sft", "supervised fine-tuning (recipes b1, LA2b200s, smoke)", ""),
        ("simpo", "SimPO preference optimisation (recipes simpoN, smoke_simpo)", ""),
        ("rlvr", "RLVR: GRPO with the checker as reward (recipes rlvr, rlvr-smoke)", RLVR_DETAILS),
    ):
        sub = actions.add_parser(
            trainer,
            help=help_text,
            description=f"{help_text}.{details} Trailing key=value arguments override fields.",
            epilog="Example: rsi-hub train sft --recipe LA2b200s sources.iflensyn=data_src/iflensyn/data.jsonl --dry-run",
        )
        sub.add_argument(
            "--recipe", required=True, metavar="NAME", help="shipped recipe name or YAML file"
        )
        sub.add_argument(
            "--dry-run",
            action="store_true",
            help="check the recipe and print it, the TRL arguments and the launch command; load nothing",
        )
        sub.add_argument(
            "--slurm",
            action="store_true",
            help="submit the run to Slurm through launch/slurm_train.sbatch (which also queues "
            "`train finalize` afterany) and print the job id; a CPU recipe asks for no GPU",
        )
        sub.add_argument(
            "--sbatch-option",
            action="append",
            default=[],
            metavar="OPTION",
            help="with --slurm: extra sbatch option, e.g. --sbatch-option=--partition=debug "
            "(repeatable)",
        )
        sub.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="recipe overrides")
        sub.set_defaults(func=run_trainer, trainer=trainer)

    finalize = actions.add_parser(
        "finalize",
        help="record the final Slurm state of a run's job in its training_evidence.json",
        description="Ask sacct for the final state of the run's Slurm job (run after the job ended).",
    )
    finalize.add_argument("run_dir", metavar="RUN")
    finalize.set_defaults(func=run_finalize)

    recipes = actions.add_parser(
        "recipes", help="list the shipped recipes", description="List the shipped recipes."
    )
    recipes.set_defaults(func=run_recipes)


def run_trainer(args: argparse.Namespace) -> int:
    from rsi_hub.train import load_recipe

    recipe = load_recipe(args.recipe, args.overrides, trainer=args.trainer)
    argv = ["train", args.trainer, "--recipe", args.recipe, *args.overrides]
    if args.dry_run:
        from rsi_hub.train.dryrun import describe_yaml

        print(describe_yaml(recipe, argv), end="")
        return 0
    if args.slurm:
        return submit_to_slurm(args, recipe)
    from rsi_hub.train import train
    from rsi_hub.train.launch import relaunch_if_needed, require_packing_support

    require_packing_support(recipe)
    relaunch_if_needed(recipe, argv)
    result = train(recipe)
    from rsi_hub.distributed import is_main_process

    if not result.skipped and is_main_process():  # one summary per launch, not one per rank
        evidence = result.evidence
        print(
            f"{result.run_dir}: {evidence.optimizer_steps} optimizer steps, loss "
            f"{evidence.first_loss} -> {evidence.last_loss}, "
            f"dataset sha256 {evidence.dataset_sha256}"
        )
    return 0


def submit_to_slurm(args: argparse.Namespace, recipe: TrainRecipe) -> int:
    """Submit the run through train's Slurm template; print the job id and its log."""
    from pathlib import Path

    from rsi_hub import slurm
    from rsi_hub.train.launch import slurm_submit_args

    log_dir = Path("logs")
    log_dir.mkdir(exist_ok=True)  # Slurm opens the job's log before the script runs
    sbatch_args = slurm_submit_args(
        recipe,
        [args.trainer, args.recipe, *args.overrides],
        log_dir=log_dir,
        extra=tuple(args.sbatch_option),
    )
    job = slurm.sbatch(sbatch_args)
    print(
        f"{recipe.run_dir}: Slurm job {job} (log {log_dir}/{Path(recipe.run_dir).name}-train-{job}.out)"
    )
    return 0


def run_finalize(args: argparse.Namespace) -> int:
    from rsi_hub.train import finalize_slurm_state

    evidence = finalize_slurm_state(args.run_dir)
    print(f"{args.run_dir}: Slurm job {evidence.slurm_job_id} {evidence.slurm_state}")
    return 0


def run_recipes(args: argparse.Namespace) -> int:
    from rsi_hub.train import available_recipes, load_recipe

    for name in available_recipes():
        recipe = load_recipe(name)
        print(f"{name}\t{recipe.trainer}\t{recipe.description}")
    return 0
