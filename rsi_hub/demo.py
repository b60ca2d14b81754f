"""The README's main job: the whole chain on the embedded default, on a CPU, in a few minutes.

build the tiny checkpoint -> short SFT on the shipped demo chats (it learns to stop at
<|im_end|>) -> evaluate IF-818 with a limit -> release to a local folder (staged and validated)
-> load that folder with `transformers.pipeline` and answer a constrained prompt, printing the
checker's checklist. Each step is the library call the matching `rsi-hub` command makes.
"""

from __future__ import annotations

import shutil
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from rsi_hub.errors import OutputDirNotEmptyError

DEMO_MARKER = ".rsi-hub-demo"
DEFAULT_MESSAGE = (
    'Name the capital of Spain in exactly seven words. Do not use the letter z. End with "Madrid."'
)


@dataclass
class DemoResult:
    """What the main job produced."""

    run_dir: Path
    release_dir: Path
    if818_passed: int
    if818_scored: int
    reply: str
    checks_met: int
    checks_total: int


def _step(number: int, text: str) -> float:
    print(f"\n==> [{number}/5] {text}", flush=True)
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


def run_demo(
    workdir: str | Path = "runs/demo",
    *,
    message: str = DEFAULT_MESSAGE,
    eval_limit: int = 8,
    sft_steps: int | None = None,
    max_new_tokens: int = 64,
) -> DemoResult:
    """Run the whole chain on the embedded default under `workdir`; print progress and results.

    Args:
        workdir: the demo's folder (`tiny/`, `sft/`, `release/` inside); replaced on each run,
            refused when it holds files the demo did not write.
        message: the constrained prompt answered at the end.
        eval_limit: IF-818 prompts scored (a smoke test, not the served configuration's n).
        sft_steps: override the `smoke` recipe's step count (default: the recipe's).
        max_new_tokens: reply length limit of the final answer.
    """
    from rsi_hub.evaluate import evaluate_run
    from rsi_hub.evaluate.config import EvalConfig
    from rsi_hub.release import release_to_folder
    from rsi_hub.space_support import answer_with_checklist
    from rsi_hub.tiny import build_tiny
    from rsi_hub.train import load_recipe, train

    workdir = Path(workdir)
    _claim_workdir(workdir)

    started = _step(1, f"build the tiny nemotron_h checkpoint in {workdir / 'tiny'}")
    tiny = build_tiny(workdir / "tiny")
    _done(started)

    started = _step(2, "SFT on the shipped demo chats (recipe smoke, TRL SFTTrainer, CPU)")
    overrides: dict[str, object] = {"model": str(tiny), "output_dir": str(workdir / "sft")}
    if sft_steps is not None:
        overrides["max_steps"] = sft_steps
    result = train(load_recipe("smoke", overrides, trainer="sft"))
    losses = [row["loss"] for row in result.log_history if "loss" in row]
    if losses:
        print(f"    loss {losses[0]:.3f} -> {losses[-1]:.3f} over {len(losses)} logged steps")
    _done(started)

    started = _step(3, f"evaluate IF-818 on its first {eval_limit} prompts (lm-eval, checker)")
    outcome = evaluate_run(EvalConfig(result.run_dir, "if818", limit=eval_limit), progress=print)[0]
    metrics = outcome.metrics["if818"]
    passed, scored = int(metrics["pass_count"]), eval_limit
    print(f"    if818: {passed}/{scored} prompts pass; results in {outcome.folder}")
    _done(started)

    started = _step(4, f"release to the local folder {workdir / 'release'} (stage + validate)")
    release_dir = release_to_folder(result.run_dir, workdir / "release", name="tiny")
    _done(started)

    started = _step(5, "load the release with transformers.pipeline and answer:")
    print(f"    user: {message}")
    answer = answer_with_checklist(
        release_dir,
        message,
        max_new_tokens=max_new_tokens,
        log=lambda text: print(textwrap.indent(text, "    ")),
    )
    _done(started)
    met = sum(1 for item in answer.checklist if item.passed)
    return DemoResult(
        run_dir=result.run_dir,
        release_dir=release_dir,
        if818_passed=passed,
        if818_scored=scored,
        reply=answer.reply,
        checks_met=met,
        checks_total=len(answer.checklist),
    )
