"""`rsi-hub demo`: the README's main job on the embedded default."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="the main job on the embedded default: build the tiny checkpoint and chat with it",
        description=(
            "Build the tiny nemotron_h checkpoint into OUT (replacing what the demo wrote there "
            "before), load it with transformers.pipeline as any user would, and answer one chat "
            "message: prints the rendered prompt (with the k0 system prompt) and the reply. The "
            "tiny model is random-init, so its reply is noise."
        ),
    )
    parser.add_argument(
        "--out", default="runs/demo", help="folder of the demo's run directory (default runs/demo)"
    )
    parser.add_argument(
        "--message",
        default="Describe a lighthouse in exactly twelve words.",
        help="the user message to answer",
    )
    parser.add_argument(
        "--max-new-tokens", type=int, default=32, help="reply length limit (default 32)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.demo import run_demo

    run_demo(args.out, message=args.message, max_new_tokens=args.max_new_tokens)
    return 0
