"""`rsi-hub prep`: prepare a data mix into tokenised, assistant-masked training data."""

from __future__ import annotations

import argparse

DEFAULT_TOKENIZER = "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-Base-BF16"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prep",
        help="prepare a data mix: ChatML render, tokenise, assistant-only mask, sha256, stats",
        description=(
            "Read each source of the mix (Hub dataset or local file), convert rows to ChatML, drop "
            "rows whose user prompt matches a holdout suite prompt (and refuse prompts*.jsonl "
            "inputs), render with the served chat template, tokenise, and mask everything but the "
            "assistant answers and their <|im_end|>. Writes DIR/data.arrow and DIR/stats.json "
            "(samples, tokens, supervised fraction per source; the dataset sha256). SimPO "
            "sources (dpo_ufb) are written as pre-rendered prompt/chosen/rejected strings."
        ),
        epilog=(
            "Sources: tulu3 ultrachat smoltalk magpie numina openthoughts (Hub), iflensyn phr1 "
            "phrw (local synthetic sets), dpo_ufb (preferences), demo demo_pref (shipped). "
            "Example: rsi-hub prep --mix iflensyn:33000 --source iflensyn=data_src/iflensyn/data.jsonl "
            "--tokenizer runs/b1 --out runs/data/iflensyn33k"
        ),
    )
    parser.add_argument(
        "--mix", required=True, metavar="SPEC", help="e.g. tulu3:all,smoltalk:all or iflensyn:33000"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    parser.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="read source NAME from a local .jsonl/.json/.parquet file or folder (repeatable)",
    )
    parser.add_argument(
        "--tokenizer",
        default=DEFAULT_TOKENIZER,
        metavar="MODEL",
        help=f"folder or Hub id of the model whose tokenizer to use (default {DEFAULT_TOKENIZER})",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the name:N samples (default 0)"
    )
    parser.add_argument(
        "--system",
        choices=("keep", "k0", "none"),
        default="keep",
        help="system message: the row's own (keep, default), the served k0 on every row, or none",
    )
    parser.add_argument(
        "--max-length", type=int, default=8192, help="drop rows longer than this (default 8192)"
    )
    parser.add_argument(
        "--no-holdout-guard",
        action="store_true",
        help="do not drop rows matching holdout prompts (recorded in stats.json; never for real runs)",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace DIR if it already holds files"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.data import format_table, parse_source_overrides, prepare

    result = prepare(
        args.mix,
        args.out,
        tokenizer=args.tokenizer,
        sources=parse_source_overrides(args.source),
        seed=args.seed,
        system=args.system,
        max_length=args.max_length,
        holdout_guard=not args.no_holdout_guard,
        force=args.force,
    )
    print(format_table(result.stats))
    holdout = result.stats["holdout"]
    print(f"holdout guard: {holdout['guard']}, dropped {holdout['dropped']} row(s)")
    print(f"sha256 {result.sha256}")
    print(f"written to {result.path}")
    return 0
