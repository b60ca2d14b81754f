"""`rsi-hub eval`: score a run directory on the card's suites through lm-eval."""

from __future__ import annotations

import argparse

from rsi_hub.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from rsi_hub.evaluate.config import EvalConfig


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `rsi-hub eval`; its options are generated from `EvalConfig`'s fields."""
    parser = subparsers.add_parser(
        "eval",
        help="score a run on IF-818, IF263, IF-3k, EV4, PREF or MMLU (lm-evaluation-harness)",
        description=(
            "Run the lm-eval tasks of tasks/lm_eval/ on a run directory in the served "
            "configuration: chat template, k0 system message (none for IF263), greedy, stop on "
            "<|im_end|>, at most 2,048 new tokens, thinking off. Writes RUN/eval/<suite>/ with "
            "results.json, one samples_<task>.jsonl per task and meta.json (weights sha256, "
            "checker version, system prompt id, generation settings). `--suite all` runs "
            "if818, if263, ev4, pref and mmlu, each in its own protocol, loading the model once. "
            "MMLU and the default PREF pairs come from the Hub: offline they fail at once. "
            "--system-prompt-file scores a candidate system prompt instead of k0 (what "
            "`rsi-hub prompt-search` does): results go to RUN/eval/<suite>.prompt-<id>/ and are "
            "never taken for the served configuration."
        ),
    )
    add_dataclass_arguments(parser, EvalConfig)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Score the run as the parsed options say; print one summary line per suite."""
    from rsi_hub.evaluate import evaluate_run, format_outcome

    outcomes = evaluate_run(dataclass_from_args(EvalConfig, args), progress=print)
    for outcome in outcomes:
        print(format_outcome(outcome))
    return 0
