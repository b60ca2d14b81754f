"""`rsi-hub release`: stage, validate and (optionally) push a run to the Hub."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "release",
        help="stage a run as a Hub repository, validate it, and push it in one atomic commit",
        description=(
            "Stage RUN as a Hub repository folder (weights hard-linked when on the same file "
            "system, config.json without auto_map, tokenizer and serving files, "
            "training_evidence.json, LICENSE, README.md rendered from release/NAME/ with the "
            "run's own evaluation results, release_manifest.json with the size and sha256 of every "
            "file), then validate it (loads with transformers.pipeline, k0 template, stops on ids "
            "11 and 2, shard hashes, evidence). With --push, upload it in one commit and check "
            "every remote file's size and sha256; re-running finishes an interrupted push. The "
            "token comes from HF_TOKEN or `hf auth login`, never from the command line."
        ),
    )
    parser.add_argument("run", metavar="RUN", help="the run directory (runs/NAME)")
    parser.add_argument(
        "--name", help="the facts folder release/NAME/ (default: the run's folder name)"
    )
    parser.add_argument(
        "--out", help="staging folder (default: release-NAME beside the run, for hard links)"
    )
    parser.add_argument(
        "--repo-id", metavar="ORG/NAME", help="Hub repository (default: the facts')"
    )
    parser.add_argument("--push", action="store_true", help="push after validation")
    visibility = parser.add_mutually_exclusive_group()
    visibility.add_argument(
        "--private",
        dest="private",
        action="store_true",
        default=True,
        help="create the repository private (the default)",
    )
    visibility.add_argument(
        "--public", dest="private", action="store_false", help="create the repository public"
    )
    parser.add_argument(
        "--create-pr", action="store_true", help="push to a pull request instead of main"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="stage and validate, then print the commit a push would send; contact no Hub",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help=(
            "also delete files a previous staging in --out did not write (a folder that is not "
            "a staged release, or that holds the run, is never replaced)"
        ),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.release import commit_operations, plan_push, release

    outcome = release(
        args.run,
        name=args.name,
        out=args.out,
        repo_id=args.repo_id,
        push=args.push and not args.dry_run,
        private=args.private,
        create_pr=args.create_pr,
        force=args.force,
    )
    staged = outcome.staged
    if args.dry_run:
        # Against an empty repository: what a first push sends (a re-push sends only differences).
        plan = plan_push(staged.folder, staged.manifest, {})
        target = "a pull request on" if args.create_pr else "main of"
        print(
            f"dry run: would create {staged.manifest.repo_id} "
            f"({'private' if args.private else 'public'}) and send one commit to {target} it:"
        )
        for operation in commit_operations(staged.folder, plan):
            print(f"  add {operation.path_in_repo}")
    elif outcome.push is not None:
        where = outcome.push.pr_url or f"https://huggingface.co/{outcome.push.repo_id}"
        print(f"released {staged.manifest.name} to {where}")
    else:
        print(f"staged and validated {staged.folder}; push it with: {_push_command(args)}")
    return 0


def _push_command(args: argparse.Namespace) -> str:
    """The command that pushes what was just staged: the same run, facts, folder and target."""
    import shlex

    words = ["rsi-hub", "release", args.run]
    for flag, value in (("--name", args.name), ("--out", args.out), ("--repo-id", args.repo_id)):
        if value:
            words += [flag, value]
    if not args.private:
        words.append("--public")
    if args.create_pr:
        words.append("--create-pr")
    return shlex.join([*words, "--push"])
