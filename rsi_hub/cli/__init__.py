"""The `rsi-hub` command line: a thin layer that parses arguments and calls the library.

Each sub-command lives in its own module under `rsi_hub.cli` and exposes
`register(subparsers)`, which adds its parser and sets `func` to a callable taking the parsed
namespace and returning an exit code. No logic lives here beyond argument handling.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from rsi_hub import __version__
from rsi_hub.errors import RsiHubError

# Module names under rsi_hub.cli, in the order `--help` lists them.
COMMAND_MODULES: list[str] = [
    "demo",
    "tiny",
    "validate",
    "check",
    "suites",
    "prep",
    "train",
    "synth",
    "eval",
    "serve",
    "tasks_path",
    "compare",
    "rescore",
    "failures",
    "power",
    "soup",
    "prompt_search",
    "sweep",
    "replicate",
    "runs",
    "plot",
    "release",
    "space",
]


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every registered sub-command."""
    parser = argparse.ArgumentParser(
        prog="rsi-hub",
        description=(
            "Train, evaluate, release and serve RSIAgent-Delta (a nemotron_h chat fine-tune). "
            "Run `rsi-hub COMMAND --help` for the options of one command."
        ),
    )
    parser.add_argument("--version", action="version", version=f"rsi-hub {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f"rsi_hub.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `rsi-hub` console script; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except RsiHubError as err:
        print(f"rsi-hub {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"rsi-hub {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
