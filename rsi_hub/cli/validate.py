"""`rsi-hub validate`: check a model folder against the serving contract."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check a run or release folder against the serving contract (card section 1)",
        description=(
            "Check that a model folder (config.json with model_type, model*.safetensors) has the "
            "served chat template in chat_template.jinja and, "
            "byte-identical, in tokenizer_config.json; k0 in system_prompt.txt; the card's "
            "serving_config.json; <|im_end|> at id 11 as eos_token; and generation_config.json "
            "stopping on ids 11 and 2 with greedy decoding. Exit 0 when it does, 2 with one line "
            "per problem otherwise."
        ),
    )
    parser.add_argument("folder", metavar="RUN", help="run directory or staged release folder")
    parser.add_argument(
        "--fix",
        action="store_true",
        help="rewrite the serving files (template, k0, serving and generation config) first",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rsi_hub.chat import validate_model_folder, write_serving_files

    if args.fix:
        write_serving_files(args.folder)
    validate_model_folder(args.folder)
    print(f"{args.folder}: serving contract OK")
    return 0
