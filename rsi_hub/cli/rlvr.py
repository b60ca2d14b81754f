"""`rsi-hub train rlvr`: an RLVR (GRPO) arm with the checker as the reward.

This module adds the `rlvr` method to the `train` command. It is listed in `METHOD_MODULES`
(registered after every command), so it joins the `train` command's methods when that command
exists and creates a `train` command holding only `rlvr` when it does not.
"""

from __future__ import annotations

import argparse

DESCRIPTION = (
    "GRPO (TRL GRPOTrainer) on generation-pool prompts, rollouts drawn as served (k0), rewarded "
    "by the checker: reward_pass_weight x (every check passed) + reward_fraction_weight x "
    "(fraction of checks passed). Recipes: rlvr (the 30B model, 4 GPUs, vLLM colocated "
    "rollouts; launch with `accelerate launch --num_processes 4 -m rsi_hub train rlvr --recipe "
    "rlvr model=RUN`) and rlvr-smoke (the tiny checkpoint on a CPU). Writes a run directory "
    "with training_evidence.json (reward curve, prompt set sha256, hyper-parameters)."
)


def _methods_of(train: argparse.ArgumentParser) -> argparse._SubParsersAction:
    for action in train._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    raise RuntimeError("the `train` command has no methods to add `rlvr` to")


def register(subparsers: argparse._SubParsersAction) -> None:
    train = subparsers.choices.get("train")
    if train is None:
        train = subparsers.add_parser(
            "train", help="train a run (methods: rlvr)", description="Train a run."
        )
        train.add_subparsers(dest="train_method", metavar="METHOD", required=True)
    add_rlvr_parser(_methods_of(train))


def add_rlvr_parser(methods: argparse._SubParsersAction) -> None:
    """Add `rlvr` to the `train` command's methods."""
    parser = methods.add_parser(
        "rlvr", help="RLVR: GRPO with the checker as reward", description=DESCRIPTION
    )
    parser.add_argument("--recipe", required=True, help="rlvr, rlvr-smoke, or a YAML file")
    parser.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help="recipe overrides, e.g. max_steps=50"
    )
    parser.add_argument("--force", action="store_true", help="write into a non-empty output_dir")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.synth.rlvr import load_recipe, train_rlvr

    config = load_recipe(args.recipe, args.overrides)
    out = train_rlvr(config, force=args.force)
    print(f"RLVR run written to {out} (training_evidence.json holds the reward curve)")
    return 0
