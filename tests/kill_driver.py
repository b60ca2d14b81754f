"""Runs one writer in forked child processes on request, for the kill sweep.

    python -m tests.kill_driver WRITER WORKDIR [TINY_RUN]

Reads one command per line on stdin, `VARIANT N`: runs the writer's `old` or `new` output in a
forked child with `RSI_HUB_KILL_AT=N` (0: no kill) and answers one line on stdout: `killed`
(the child died of SIGKILL at its N-th crash point), `exit 0` (it finished first) or `exit 1`
(it raised; the traceback goes to stderr). The imports (torch, transformers, the checker) are
paid once here; each child is a fresh fork whose crash-point count starts at zero, and since
this process never sets `RSI_HUB_KILL_AT` its own count stays at zero. `tests/test_kill_sweep.py`
drives it and checks the files on disk between commands.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from rsi_hub.crashpoint import KILL_AT_ENV

Writer = Callable[[str], None]


def synth_writer(work: Path) -> Writer:
    """The stand-in synthesis run of tests/test_synth_resume.py, batches of two (`new` only)."""
    from rsi_hub.rundir import library_versions
    from rsi_hub.synth import run_synthesis
    from tests.synth_standins import PROMPTS, StandInBackend, clean_audit
    from tests.test_synth_resume import SPEC

    library_versions()  # imports torch and transformers once here, not in every child

    def run(_variant: str) -> None:
        run_synthesis(
            PROMPTS, StandInBackend(), work / "out", SPEC, audit=clean_audit, batch_size=2
        )

    return run


def prep_writer(work: Path, tiny_run: Path) -> Writer:
    """Prep of 12 rows (`old`: 5 of them) with the tiny tokenizer, replacing the output."""
    import datasets  # noqa: F401  imported once here, not in every child
    import pyarrow  # noqa: F401
    from transformers import AutoTokenizer

    from rsi_hub.data import PrepConfig, prepare

    source = work / "src.jsonl"
    rows = [
        {
            "messages": [
                {"role": "user", "content": f"Q{i}?"},
                {"role": "assistant", "content": f"A{i}."},
            ]
        }
        for i in range(12)
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    tokenizer = AutoTokenizer.from_pretrained(tiny_run)

    def run(variant: str) -> None:
        mix = "iflensyn:5" if variant == "old" else "iflensyn:all"
        config = PrepConfig(mix=mix, out=work / "out", sources={"iflensyn": str(source)},
                            holdout_guard=False, force=True)  # fmt: skip
        prepare(config, tokenizer=tokenizer)

    return run


def eval_writer(work: Path) -> Writer:
    """An evaluation result folder `run/eval/if818` with two sample logs, replaced."""
    from rsi_hub.evaluate.store import write_suite_dir
    from rsi_hub.rundir import EvalMeta

    def run(variant: str) -> None:
        samples = {
            task: [{"doc_id": i, "resps": [[f"{variant} {task} {i}"]]} for i in range(3)]
            for task in ("if818", "if818_ev4")
        }
        results = {"results": {"if818": {"acc,none": 0.5 if variant == "old" else 0.75}}}
        meta = EvalMeta(suite="if818", extra={"variant": variant})
        write_suite_dir(work / "run", "if818", results, samples, meta)

    return run


def soup_writer(work: Path, tiny_run: Path) -> Writer:
    """A soup of the tiny run with itself in 300 KB shards (`old`: weights 0.25 / 0.75)."""
    import safetensors.torch  # noqa: F401  imported once here, not in every child (seconds)
    import torch  # noqa: F401

    from rsi_hub.experiments.soup import soup

    def run(variant: str) -> None:
        weights = [0.25, 0.75] if variant == "old" else None
        soup([tiny_run, tiny_run], work / "out", weights, max_shard_size="300KB", force=True)

    return run


def _run_child(writer: Writer, variant: str, kill_at: int) -> str:
    pid = os.fork()
    if pid == 0:
        os.dup2(2, 1)  # the child's prints must not mix with the answers on stdout
        if kill_at:
            os.environ[KILL_AT_ENV] = str(kill_at)
        try:
            writer(variant)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        return "killed"
    return f"exit {os.waitstatus_to_exitcode(status)}"


def main(argv: list[str]) -> None:
    """Set up the writer named in `argv`, then serve commands until stdin closes."""
    name, work = argv[0], Path(argv[1])
    os.environ.pop(KILL_AT_ENV, None)
    if name == "synth":
        writer = synth_writer(work)
    elif name == "prep":
        writer = prep_writer(work, Path(argv[2]))
    elif name == "eval":
        writer = eval_writer(work)
    else:
        writer = soup_writer(work, Path(argv[2]))
    print("ready", flush=True)
    for line in sys.stdin:
        variant, kill_at = line.split()
        print(_run_child(writer, variant, int(kill_at)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
