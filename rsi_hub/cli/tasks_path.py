"""`rsi-hub tasks-path`: where the installed lm-eval tasks are, for `lm_eval --include_path`."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tasks-path",
        help="print the installed lm-eval task folder (for lm_eval --include_path)",
        description=(
            "Print the folder of rsi-hub's lm-evaluation-harness tasks (if818, if263, if3k, ev4, "
            "pref, rsi_suite) as installed. lm-eval 0.4.13 finds external tasks only through "
            "--include_path, so a bare `--tasks if818` fails with `Tasks not found: if818`; use "
            'lm_eval --include_path "$(rsi-hub tasks-path)" --tasks if818 --model hf '
            "--model_args pretrained=RUN --apply_chat_template"
        ),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.evaluate.harness import tasks_dir

    print(tasks_dir())
    return 0
