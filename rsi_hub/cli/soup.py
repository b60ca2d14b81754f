"""`rsi-hub soup`: average the weights of checkpoints (card section 3, SOUP1 / soup7)."""

from __future__ import annotations

import argparse


def _weights(text: str) -> list[float]:
    try:
        return [float(w) for w in text.split(",")]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"weights are comma-separated numbers: {text!r}") from err


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "soup",
        help="average the weights of two or more checkpoints into a new run directory",
        description=(
            "Uniform or weighted average of checkpoints of one architecture and tokenizer, "
            "streamed tensor by tensor (peak memory about one read window per ingredient, never "
            "the checkpoint), accumulated in FP32, written as sharded safetensors with an index "
            "and a training_evidence.json naming every ingredient, its weight and weights hash. "
            "Mismatched configs, tokenizers or tensor sets are refused, naming the first difference."
        ),
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="ingredient run directories (2+)")
    parser.add_argument("--out", required=True, metavar="RUN", help="run directory to write")
    parser.add_argument(
        "--weights",
        type=_weights,
        default=None,
        metavar="W1,W2,...",
        help="one weight per ingredient, summing to 1 (default: uniform)",
    )
    parser.add_argument(
        "--max-shard-size", default="5GB", help="largest output shard, e.g. 5GB (default)"
    )
    parser.add_argument(
        "--read-window",
        default="512MB",
        help="bytes read from one memory-mapped input shard before it is reopened; peak memory "
        "is about one window (or shard, if smaller) per ingredient (default 512MB)",
    )
    parser.add_argument("--force", action="store_true", help="replace --out if it holds files")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.experiments.soup import soup

    report = soup(
        args.runs,
        args.out,
        args.weights,
        max_shard_size=args.max_shard_size,
        read_window=args.read_window,
        force=args.force,
    )
    weights = ", ".join(f"{name}={weight:g}" for name, weight in report.evidence.soup_weights)
    print(
        f"soup of {weights} written to {report.out_dir}: {report.tensors} tensors, "
        f"{report.total_bytes / 1e6:.1f} MB in {len(report.shards)} shard(s); "
        f"weights sha256 {report.evidence.weights_sha256}"
    )
    return 0
