"""`rsi-hub space`: deploy the Gradio chat demo (space/) to a Hugging Face Space."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "space",
        help="deploy the Gradio chat demo with its live constraint checklist to a Space",
        description=(
            "Deploy space/app.py (README front matter, requirements.txt) with the parts of "
            "rsi_hub it imports and templates/ to a Gradio Space in one commit. Run it locally "
            "instead with: MODEL_ID=RUN python space/app.py"
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    deploy = actions.add_parser("deploy", help="create or update the Space")
    deploy.add_argument(
        "--space-id", required=True, metavar="ORG/NAME", help="the Space repository"
    )
    deploy.add_argument(
        "--model-id",
        help="set the Space variable MODEL_ID (default in the app: the released model)",
    )
    deploy.add_argument("--private", action="store_true", help="create the Space private")
    deploy.add_argument(
        "--dry-run", action="store_true", help="list the files it would send; contact no Hub"
    )
    deploy.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.space_support.deploy import deploy_space

    deploy_space(args.space_id, model_id=args.model_id, private=args.private, dry_run=args.dry_run)
    return 0
