"""`rsi-hub tiny`: build the embedded default checkpoint."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tiny",
        help="build the tiny random-init nemotron_h checkpoint (the embedded default)",
        description=(
            "Build a tiny random-init NemotronHForCausalLM (Mamba, attention and MoE blocks) with "
            "a locally trained byte-level BPE tokenizer whose special tokens sit at the real ids "
            "(<unk> 0, <s> 1, </s> 2, <|im_start|> 10, <|im_end|> 11), saved as a run directory "
            "with the serving files. The same seed gives the same bytes."
        ),
    )
    parser.add_argument("out_dir", metavar="OUT_DIR", help="folder to write the run directory to")
    parser.add_argument(
        "--seed", type=int, default=0, help="weight initialisation seed (default 0)"
    )
    parser.add_argument(
        "--size",
        choices=("tiny", "nano"),
        default="tiny",
        help="tiny: the embedded default (default); nano: the CPU replication's model "
        "(width 256, 3 attention/Mamba layers, 3 MoE, a 4,096-token vocabulary)",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace OUT_DIR if it already holds files"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.tiny import build_tiny

    out = build_tiny(args.out_dir, seed=args.seed, force=args.force, size=args.size)
    print(f"{args.size} nemotron_h checkpoint written to {out}")
    return 0
