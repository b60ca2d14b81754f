"""`rsi-hub prep`: prepare a data mix into tokenised, assistant-masked training data."""

from __future__ import annotations

import argparse

from rsi_hub.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from rsi_hub.data.config import PrepConfig


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `rsi-hub prep`; its options are generated from `PrepConfig`'s fields."""
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
    add_dataclass_arguments(parser, PrepConfig)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Prepare the mix the parsed options describe; print the card's table and the sha256."""
    from rsi_hub.data import format_table, prepare

    result = prepare(dataclass_from_args(PrepConfig, args))
    print(format_table(result.stats))
    holdout = result.stats["holdout"]
    print(f"holdout guard: {holdout['guard']}, dropped {holdout['dropped']} row(s)")
    print(f"sha256 {result.sha256}")
    print(f"written to {result.path}")
    return 0
