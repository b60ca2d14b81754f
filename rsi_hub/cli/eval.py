"""`rsi-hub eval`: score a run directory on the card's suites through lm-eval."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    from rsi_hub.evaluate.protocol import SUITE_CHOICES

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
    parser.add_argument("run", metavar="RUN", help="run directory to score")
    parser.add_argument(
        "--suite",
        default="if818",
        metavar="SUITE",
        help=(
            f"{', '.join(SUITE_CHOICES)}, or several comma-separated (one model load); "
            "default if818"
        ),
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="score only the first N documents of each task (smoke tests; guards ignore it)",
    )
    parser.add_argument(
        "--backend",
        choices=("hf", "vllm"),
        default="hf",
        help="hf: transformers on CPU or GPU (default); vllm: lm-eval's vLLM model on GPUs",
    )
    parser.add_argument(
        "--batch-size", type=int, default=None, metavar="B", help="batch size (hf default 8)"
    )
    parser.add_argument("--device", default=None, help="hf device (default cuda if available)")
    parser.add_argument(
        "--tensor-parallel-size", type=int, default=1, metavar="TP", help="vllm: GPUs per replica"
    )
    parser.add_argument(
        "--data-parallel-size", type=int, default=1, metavar="DP", help="vllm: replicas"
    )
    parser.add_argument(
        "--pref-data",
        default=None,
        metavar="SOURCE",
        help=(
            "score PREF on other pairs: a JSONL file, pref_demo (the shipped offline demo) or "
            "a Hub dataset id (default: HuggingFaceH4/ultrafeedback_binarized test_prefs)"
        ),
    )
    parser.add_argument(
        "--system-prompt-file",
        default=None,
        metavar="FILE",
        help=(
            "a candidate system prompt (the file's text, surrounding white space removed; an "
            "empty file means no system message) used instead of k0. NOT the served "
            "configuration: writes RUN/eval/<suite>.prompt-<ID>/, meta.json records the id and "
            "sha256. IF263 (no system message by protocol) gets it only when named in --suite"
        ),
    )
    parser.add_argument(
        "--system-prompt-id",
        default=None,
        metavar="ID",
        help="the candidate's id, in meta.json and the folder name (default: the file's stem)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.errors import RsiHubError
    from rsi_hub.evaluate import evaluate_run, format_outcome

    if args.limit is not None and args.limit < 1:
        raise RsiHubError("--limit must be at least 1")
    system_prompt = system_prompt_id = None
    if args.system_prompt_file is not None:
        path = Path(args.system_prompt_file)
        if not path.is_file():
            raise RsiHubError(f"--system-prompt-file {path}: no such file")
        system_prompt = path.read_text(encoding="utf-8").strip()
        system_prompt_id = args.system_prompt_id or path.stem
    elif args.system_prompt_id is not None:
        raise RsiHubError("--system-prompt-id needs --system-prompt-file")
    outcomes = evaluate_run(
        args.run,
        args.suite,
        limit=args.limit,
        backend=args.backend,
        batch_size=args.batch_size,
        device=args.device,
        tensor_parallel_size=args.tensor_parallel_size,
        data_parallel_size=args.data_parallel_size,
        pref_data=args.pref_data,
        system_prompt=system_prompt,
        system_prompt_id=system_prompt_id,
        progress=print,
    )
    for outcome in outcomes:
        print(format_outcome(outcome))
    return 0
