"""`rsi-hub synth lensyn|rft`: grow a verifier-filtered data set from a checkpoint."""

from __future__ import annotations

import argparse
import sys

DESCRIPTIONS = {
    "lensyn": (
        "Scaffolded generation (card section 2): for each eligible generation-pool prompt, draw K "
        "samples under the scaffold system message (templates/lensyn_scaffold.txt: draft, count, "
        "revise, then FINAL: and the answer), judge the text after the last FINAL: marker with the "
        "checker, and keep exact passes as ChatML rows (system k0, the prompt, the bare answer)."
    ),
    "rft": (
        "Plain rejection sampling (the card's s1 stage and rftc arms): draw K samples per eligible "
        "pool prompt as served (k0, no scaffold), keep exact passes as ChatML rows."
    ),
}
EPILOG = (
    "OUT gets data.jsonl (kept rows), ledger.jsonl (every judged sample), run.json and, when the "
    "run completes, provenance.json (model and weights sha256, sampling, prompt ids, per-check "
    "pass rates, rows kept / generated, data sha256, the holdout audit). Running the same "
    "command again resumes an interrupted run without duplicates. Exit 2 if the audit finds "
    "holdout prompts in the data."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "synth",
        help="verifier-filtered synthetic data: lensyn (scaffolded) or rft (rejection sampling)",
        description="Grow verifier-filtered synthetic instruction-following data.",
    )
    methods = parser.add_subparsers(dest="synth_method", metavar="METHOD", required=True)
    for name, description in DESCRIPTIONS.items():
        sub = methods.add_parser(
            name, help=description.split(":")[0], description=description, epilog=EPILOG
        )
        _add_options(sub)
        sub.set_defaults(func=run, synth_mode=name)


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, metavar="RUN", help="checkpoint folder")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (resumable)")
    parser.add_argument("--k", type=int, default=4, help="samples per prompt (default 4)")
    parser.add_argument("--limit", type=int, default=None, help="first N eligible prompts only")
    parser.add_argument("--backend", choices=["hf", "vllm"], default="hf", help="default hf")
    parser.add_argument(
        "--prompts",
        default=None,
        metavar="FILE",
        help="JSONL prompts ({id, prompt, checks}) instead of the suites' generation pool",
    )
    parser.add_argument(
        "--only-checks",
        default=None,
        metavar="TYPES",
        help="comma-separated check types: use only prompts carrying one (e.g. word_eq,word_times)",
    )
    parser.add_argument("--temperature", type=float, default=0.8, help="default 0.8")
    parser.add_argument("--top-p", type=float, default=0.95, help="default 0.95")
    parser.add_argument("--max-new-tokens", type=int, default=1024, help="default 1024")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="requests per generation call and ledger flush (default: hf 16, vllm 1024)",
    )
    parser.add_argument(
        "--tensor-parallel-size",
        type=int,
        default=1,
        help="GPUs per vLLM engine (vllm backend only; default 1)",
    )
    parser.add_argument(
        "--force", action="store_true", help="start over if OUT holds a run with other settings"
    )


def run(args: argparse.Namespace) -> int:
    from rsi_hub.synth import SamplingSettings, synthesize

    def progress(done: int, total: int) -> None:
        print(f"\r{args.synth_mode}: {done}/{total} samples", end="", file=sys.stderr, flush=True)

    provenance = synthesize(
        args.synth_mode,
        args.model,
        args.out,
        k=args.k,
        limit=args.limit,
        check_types=args.only_checks.split(",") if args.only_checks else None,
        backend=args.backend,
        sampling=SamplingSettings(
            temperature=args.temperature,
            top_p=args.top_p,
            max_new_tokens=args.max_new_tokens,
            seed=args.seed,
        ),
        batch_size=args.batch_size,
        tensor_parallel_size=args.tensor_parallel_size,
        prompts_file=args.prompts,
        force=args.force,
        progress=progress,
    )
    print(file=sys.stderr)
    print(
        f"{args.out}: kept {provenance.rows_kept}/{provenance.rows_generated} samples from "
        f"{provenance.prompts_sampled} prompts ({provenance.prompts_with_a_pass} with a pass); "
        f"malformed {provenance.malformed}; data sha256 {provenance.data_sha256}; "
        f"audit {'passed' if provenance.audit_passed else 'FAILED'}"
    )
    source = "iflensyn" if args.synth_mode == "lensyn" else "rft"
    print(
        f"prepare it with: rsi-hub prep --mix {source}:all --source {source}={args.out}/data.jsonl"
    )
    return 0
