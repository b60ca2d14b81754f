"""`rsi-hub demo`: the README's main job on the embedded default."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    from rsi_hub.demo import DEFAULT_MESSAGE

    parser = subparsers.add_parser(
        "demo",
        help="the main job on the embedded default: tiny checkpoint -> SFT -> eval -> release -> chat",
        description=(
            "Run the whole chain on the embedded default, on a CPU, in a few minutes: build the "
            "tiny nemotron_h checkpoint, SFT it on the shipped demo chats (recipe smoke) so it "
            "stops at <|im_end|>, evaluate IF-818 on a few prompts, release it to a local folder "
            "(staged and validated), then load that folder with transformers.pipeline and answer "
            "a constrained prompt, printing the checker's checklist. Everything is written under "
            "OUT (tiny/, sft/, release/), which each run replaces."
        ),
    )
    parser.add_argument(
        "--out", default="runs/demo", help="the demo's folder (default runs/demo; replaced)"
    )
    parser.add_argument(
        "--message", default=DEFAULT_MESSAGE, help="the constrained prompt answered at the end"
    )
    parser.add_argument(
        "--eval-limit", type=int, default=8, help="IF-818 prompts to score (default 8)"
    )
    parser.add_argument(
        "--sft-steps", type=int, default=None, help="SFT steps (default: the smoke recipe's 60)"
    )
    parser.add_argument(
        "--max-new-tokens", type=int, default=64, help="reply length limit (default 64)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.demo import run_demo

    run_demo(
        args.out,
        message=args.message,
        eval_limit=args.eval_limit,
        sft_steps=args.sft_steps,
        max_new_tokens=args.max_new_tokens,
    )
    return 0
