"""The README's main job: a short replication that shows a real gain, on a CPU, in minutes.

A random-init nano `nemotron_h` is SFT'd on the teacher's checker-verified answers for pool
prompts (round 0 of `rsi-hub replicate nano`, at the signal budget of
`rsi_hub.experiments.signal`), then the untrained init and round 0 are scored on the same held-out
IF-818 prompts and paired (prompt and check level, exact McNemar); round 0 is released to a local
folder (staged and validated), and `transformers.pipeline` loads that folder and answers an IF-818
prompt round 0 passed, printing the checker's checklist. Each step is the library call the
matching `rsi-hub` command makes; the full replication is `rsi-hub replicate nano`.
"""

from __future__ import annotations

import shutil
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rsi_hub.errors import OutputDirNotEmptyError

if TYPE_CHECKING:
    from rsi_hub.experiments.signal import CheckLevelPairs

DEMO_MARKER = ".rsi-hub-demo"
STEPS = 4


@dataclass
class DemoResult:
    """What the main job produced."""

    out: Path
    init_dir: Path
    run_dir: Path
    release_dir: Path
    prompts_scored: int
    init_passed: int
    round0_passed: int
    check_pairs: CheckLevelPairs
    message: str
    reply: str
    checks_met: int
    checks_total: int


def _step(number: int, text: str) -> float:
    print(f"\n==> [{number}/{STEPS}] {text}", flush=True)
    return time.monotonic()


def _done(started: float) -> None:
    print(f"    done in {time.monotonic() - started:.1f} s", flush=True)


def _claim_workdir(workdir: Path) -> None:
    # The demo replaces only what it wrote itself: a folder it marked, or an empty one.
    if workdir.exists() and any(workdir.iterdir()):
        if not (workdir / DEMO_MARKER).is_file():
            raise OutputDirNotEmptyError(
                f"{workdir} holds files the demo did not write: pass --out with an empty or new "
                "folder."
            )
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / DEMO_MARKER).write_text("written by `rsi-hub demo`; replaced on every run\n")


def passed_prompt(run: Path) -> str | None:
    """An IF-818 prompt `run` passed whose constraints the Space's extractor finds and its logged
    answer meets: the checklist then shows a tick for each (None when there is none)."""
    from rsi_hub.evaluate import store
    from rsi_hub.space_support.checklist import checklist_for

    for _, sample in store.read_suite_dir(run, "if818").samples("if818"):
        if not sample["acc"]:
            continue
        prompt, answer = sample["doc"]["prompt"], sample["filtered_resps"][0]
        items = checklist_for(prompt, answer)
        if items and all(item.passed for item in items):
            return prompt
    return None


def run_demo(
    workdir: str | Path = "runs/demo",
    *,
    message: str | None = None,
    steps: int | None = None,
    eval_prompts: int | None = None,
) -> DemoResult:
    """Run the short replication under `workdir`; print progress and results.

    Args:
        workdir: the demo's folder (the replication's stage folders and `release/` inside);
            replaced on each run, refused when it holds files the demo did not write.
        message: the prompt answered at the end (default: an IF-818 prompt round 0 passed).
        steps: round 0's SFT steps (default: the signal budget's).
        eval_prompts: IF-818 prompts both models are scored on (default: the signal budget's).
    """
    from rsi_hub.experiments import signal
    from rsi_hub.release import release_to_folder
    from rsi_hub.space_support import answer_with_checklist

    workdir = Path(workdir)
    _claim_workdir(workdir)
    config = signal.signal_config(
        workdir,
        steps=steps or signal.SIGNAL_STEPS,
        eval_prompts=eval_prompts or signal.SIGNAL_EVAL_PROMPTS,
    )

    started = _step(
        1,
        "round 0 of the nano replication: the teacher's verified answers for pool prompts -> a "
        "random-init nano nemotron_h -> SFT (k0, served template) -> IF-818 for init and round 0",
    )
    result = signal.round0_signal(config)
    _done(started)

    started = _step(2, "paired verdict on the same held-out IF-818 prompts (init vs round 0)")
    scored, init_passed, round0_passed = result.prompts
    print(f"    prompt level: init {init_passed}/{scored} -> round 0 {round0_passed}/{scored}")
    print(f"    {result.checks.describe()}")
    _done(started)

    started = _step(3, f"release round 0 to the local folder {workdir / 'release'}")
    release_dir = release_to_folder(result.round0, workdir / "release", name="nano")
    _done(started)

    if message is None:
        message = passed_prompt(result.round0) or (
            "Write a short note about the sea in exactly 3 sentences."
        )
    started = _step(4, "load the release with transformers.pipeline and answer:")
    print(f"    user: {message}")
    answer = answer_with_checklist(
        release_dir,
        message,
        max_new_tokens=config.eval_max_new_tokens or signal.SIGNAL_MAX_NEW_TOKENS,
        log=lambda text: print(textwrap.indent(text, "    ")),
    )
    _done(started)
    return DemoResult(
        out=workdir,
        init_dir=result.init,
        run_dir=result.round0,
        release_dir=release_dir,
        prompts_scored=scored,
        init_passed=init_passed,
        round0_passed=round0_passed,
        check_pairs=result.checks,
        message=message,
        reply=answer.reply,
        checks_met=sum(1 for item in answer.checklist if item.passed),
        checks_total=len(answer.checklist),
    )
