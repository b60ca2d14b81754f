"""`rsi-hub serve`: print, then run, the engine command that serves a run as the card says."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `rsi-hub serve`."""
    from rsi_hub.serving.launch import DEFAULT_HOST, DEFAULT_PORT, ENGINES

    parser = subparsers.add_parser(
        "serve",
        help="serve a run on an OpenAI-compatible endpoint (transformers serve or vllm serve)",
        description=(
            "Validate the model folder (as `rsi-hub validate` does; a failing folder is refused "
            "with its problems listed), print the exact engine command, then run it. The engine "
            "serves the card's configuration: the run's chat template, k0 when a conversation "
            "has no system message (a request sends chat_template_kwargs "
            '{"use_default_system_prompt": false} for none, the IF263 protocol), thinking off, '
            "stops at ids 11 and 2 and greedy decoding from generation_config.json, at most "
            "2,048 new tokens, and prompts over 8,192 tokens refused. Clients should still send "
            "temperature=0 (vLLM ignores do_sample). transformers (CPU or GPU) runs "
            "`transformers serve` with the input limit it lacks; vllm (GPU) runs `vllm serve` "
            "with --max-model-len 8192. The server is pinned to one model: requests name it as "
            "printed."
        ),
    )
    parser.add_argument("model", metavar="RUN_OR_REPO", help="run directory or Hub repository id")
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="transformers",
        help="serving engine (default %(default)s)",
    )
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help="address to listen on (default %(default)s)"
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="port to listen on (default %(default)s)"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the command and exit without running it"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the engine command and what clients send; run it unless --dry-run."""
    from rsi_hub.serving import engine_command, exec_engine
    from rsi_hub.serving.launch import check_engine_installed

    command = engine_command(args.model, engine=args.engine, host=args.host, port=args.port)
    if not args.dry_run:
        check_engine_installed(command.engine)  # one line naming the fix, before any output
    print(command.shell(), flush=True)
    print(f"# clients: base_url={command.base_url} model={command.model_id} temperature=0")
    if args.dry_run:
        return 0
    exec_engine(command)
