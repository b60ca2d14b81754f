"""`rsi-hub synth lensyn|rft`: grow a verifier-filtered data set from a checkpoint."""

from __future__ import annotations

import argparse
import sys

from rsi_hub.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from rsi_hub.synth.config import SynthConfig

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
    """Add `rsi-hub synth lensyn|rft`; their options are generated from `SynthConfig`'s fields."""
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
        add_dataclass_arguments(sub, SynthConfig)
        sub.set_defaults(func=run, synth_mode=name)
    merge = methods.add_parser(
        "merge",
        help="join the folders of a sharded run (--shard I/N) into one",
        description=(
            "Join the OUT folders of `rsi-hub synth lensyn|rft ... --shard I/N`, I = 0..N-1, "
            "into one run folder: every row once, in the unsharded run's order, one run.json "
            "and one provenance.json (what the unsharded command would have written, plus the "
            "shards it was merged from). Refuses shards of different commands, a missing, "
            "repeated or unfinished shard, and overlapping shards. Merging again is a no-op."
        ),
        epilog="Example: rsi-hub synth merge out/shard-0 out/shard-1 out/shard-2 --out out/all",
    )
    merge.add_argument("shards", nargs="+", metavar="SHARD", help="a shard's --out folder")
    merge.add_argument("--out", required=True, metavar="DIR", help="the merged run folder")
    merge.set_defaults(func=run_merge)


def run(args: argparse.Namespace) -> int:
    """Run the synthesis the parsed options describe; print a summary and the prep command."""
    from rsi_hub.synth import synthesize

    config = dataclass_from_args(SynthConfig, args, mode=args.synth_mode)

    def progress(done: int, total: int) -> None:
        print(f"\r{config.mode}: {done}/{total} samples", end="", file=sys.stderr, flush=True)

    provenance = synthesize(config, progress=progress)
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


def run_merge(args: argparse.Namespace) -> int:
    """Merge finished shard folders; print what the merged run holds."""
    from rsi_hub.synth import merge

    provenance = merge(args.shards, args.out)
    print(
        f"{args.out}: merged {len(args.shards)} shards: kept {provenance.rows_kept}/"
        f"{provenance.rows_generated} samples from {len(provenance.prompt_ids or [])} prompts; "
        f"data sha256 {provenance.data_sha256}; "
        f"audit {'passed' if provenance.audit_passed else 'FAILED'}"
    )
    return 0
