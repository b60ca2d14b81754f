"""`rsi-hub replicate nano`: the card's method in miniature, every stage through rsi-hub's own code.

Stages (each skipped on a re-run when its recorded outputs still verify, see `replicate_stages`):

1. `split`: the eligible generation pool, shuffled by the seed: the first N prompts (N: round
   0's recipe mix count) for round 0's teacher, the next `rft_prompts` (never in round 0) for
   round 1's sampling; written as prompt files under `OUT/pool/`.
2. `teacher`: `synthesize` with the reference backend (the suites' reference responder, recorded
   as such in provenance) on round 0's prompts, checker-verified, holdout audit on.
3. `init`: `build_tiny` of the recipe's random-init size (`nano`), seeded.
4. `prep0`, `round0`: `prepare` the recipe's mix of teacher rows (k0, served template, holdout
   guard) and `train` the round-0 recipe from the init.
5. `sample1`, `prep1`, `round1`: `synthesize` (rft, hf) k answers per fresh prompt from round 0,
   keep checker passes, `prepare` round 1's mix (its own samples, optionally teacher replay) and
   `train` round 1's recipe from round 0 (continue) or the init (restart).
6. `eval_init`, `eval_round0`, `eval_round1`: `evaluate_run` in the served configuration on
   IF-818 (and the guards IF263, EV4 for the trained rounds). The init's evaluation (its answers
   run to 2,048 tokens) runs in a worker process beside round 0's training, one core each
   (`run_stages`; `--serial` runs every stage in turn).
7. `compare`, `failures`, `power`, `report`: paired verdicts under the facts' guards, the
   checker's failure profile per model, what IF-818 and IF-3k can detect, and the winner's
   replication record and dose-response plot.
8. `release`: `release` of the winner with the facts `release/<facts>/`.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.errors import ExperimentError, ExperimentInputError
from rsi_hub.experiments import replicate_report as report
from rsi_hub.experiments.replicate_config import GUARD_SUITES, PRIMARY_SUITE, ReplicateConfig
from rsi_hub.experiments.replicate_stages import BackgroundLane, Stage, StageRunner, files_under
from rsi_hub.rundir import (
    DOSE_RESPONSE_FILE,
    EVAL_DIR,
    REPLICATION_REPORT_FILE,
    eval_dir,
    provenance_path,
)
from rsi_hub.rundir.jsonfile import write_text_atomic

MODELS = ("init", "round0", "round1")
# Top-level folders of a run directory that are not its weights: evaluations and checkpoints.
_NOT_WEIGHTS = (EVAL_DIR,)
_LATER_FILES = (REPLICATION_REPORT_FILE, DOSE_RESPONSE_FILE)


@dataclass(frozen=True)
class Layout:
    """Where each stage writes under OUT."""

    out: Path

    def __getattr__(self, name: str) -> Path:  # pool, teacher, init, data0, round0, ...
        return self.out / name

    def prompts(self, which: str) -> Path:
        """The prompt file of `round0` or `fresh` prompts (not named `prompts*`: prep refuses)."""
        return self.out / "pool" / f"pool_{which}.jsonl"

    def release(self, facts: str) -> Path:
        """The staged release folder of the winner."""
        return self.out / f"release-{facts}"


@dataclass
class ReplicationResult:
    """What `replicate` did: the runner's outcomes, the verdicts and the winner."""

    out: Path
    outcomes: list[Any]
    walls: dict[str, float]
    comparisons: dict[str, dict[str, Any]]
    scores: dict[str, dict[str, Any]]
    winner: str
    release: Path
    total_s: float


def _run_files(run: Path) -> list[Path]:
    """The files training wrote into a run directory (weights, tokenizer, serving, evidence)."""
    if not run.is_dir():
        return []
    return sorted(
        p
        for p in run.iterdir()
        if p.is_file() and p.name not in _LATER_FILES and not p.name.startswith(".")
    )


def _eval_files(run: Path, suites: tuple[str, ...]) -> list[Path]:
    return [p for suite in suites for p in files_under(eval_dir(run, suite))]


def _suites(config: ReplicateConfig, model: str) -> tuple[str, ...]:
    if model == "init" or not config.guards:
        return (PRIMARY_SUITE,)
    return (PRIMARY_SUITE, *GUARD_SUITES)


def _recipe(name: str, overrides: list[str]) -> Any:
    from rsi_hub.train import load_recipe

    return load_recipe(name, overrides, trainer="sft")


def _mix_count(mix: str) -> int:
    from rsi_hub.data.mix import parse_mix

    counts = [item.count for item in parse_mix(mix)]
    if any(c is None for c in counts):
        raise ExperimentInputError(
            f"round 0's mix {mix!r} takes `all` rows: give the teacher's prompt count with "
            "--round0-prompts N (or a count in the mix, e.g. rft:4800).",
            field="round0_prompts",
        )
    return int(sum(c for c in counts if c is not None))


def _split(config: ReplicateConfig, layout: Layout, round0_prompts: int) -> dict[str, Any]:
    """Write round 0's and the fresh prompt files: disjoint draws of the eligible pool.

    The pool's ids are shuffled by the seed and walked in that order; a prompt is drawn (on
    demand, as the pool does) only for the ids used, so a small run does not draw the pool.
    """
    import numpy as np

    from rsi_hub.suites import POOL_SIZE, pool_eligible, pool_prompt
    from rsi_hub.suites.prompts import PoolPrompt

    wanted_types = set(config.rft_only_checks)
    round0: list[PoolPrompt] = []
    fresh: list[PoolPrompt] = []
    for pool_id in np.random.default_rng(config.seed).permutation(POOL_SIZE).tolist():
        if len(round0) >= round0_prompts and len(fresh) >= config.rft_prompts:
            break
        if not pool_eligible(pool_id):
            continue
        prompt = PoolPrompt.from_record(pool_prompt(pool_id))
        if len(round0) < round0_prompts:
            round0.append(prompt)
        elif not wanted_types or any(c.get("type") in wanted_types for c in prompt.checks):
            fresh.append(prompt)
    if len(round0) < round0_prompts or not fresh:
        raise ExperimentInputError(
            f"the eligible pool cannot give {round0_prompts} round-0 prompts and fresh ones "
            f"for round 1 (got {len(round0)} and {len(fresh)}): lower the round-0 count or "
            "widen --rft-only-checks.",
            field="round0_prompts",
        )
    for which, prompts in (("round0", round0), ("fresh", fresh)):
        lines = [
            json.dumps({"id": p.id, "prompt": p.prompt, "checks": [dict(c) for c in p.checks]})
            for p in prompts
        ]
        write_text_atomic(layout.prompts(which), "".join(f"{line}\n" for line in lines))
    return {"round0": len(round0), "fresh": len(fresh)}


def _synth(**kwargs: Any) -> dict[str, Any]:
    from tqdm.auto import tqdm

    from rsi_hub.synth import synthesize
    from rsi_hub.synth.config import SynthConfig

    bar = tqdm(desc=f"synth rft ({kwargs['backend']})", unit="sample")

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)

    try:
        provenance = synthesize(SynthConfig(mode="rft", **kwargs), progress=progress)
    finally:
        bar.close()
    return {
        "rows_kept": provenance.rows_kept,
        "rows_generated": provenance.rows_generated,
        "prompts": provenance.prompts_sampled,
        "prompts_with_a_pass": provenance.prompts_with_a_pass,
        "audit_passed": provenance.audit_passed,
    }


def _prep(mix: str, sources: dict[str, str], tokenizer: Path, recipe: Any, out: Path) -> dict:
    from rsi_hub.data import prepare
    from rsi_hub.data.config import PrepConfig

    result = prepare(
        PrepConfig(
            mix=mix,
            out=out,
            sources=sources,
            tokenizer=str(tokenizer),
            seed=recipe.seed,
            system=recipe.system,
            max_length=recipe.max_length,
            holdout_guard=recipe.holdout_guard,
            force=True,
        ),
    )
    per_source = {name: src["samples"] for name, src in result.stats["sources"].items()}
    return {"samples": result.samples, "per_source": per_source, "sha256": result.sha256,
            "holdout": result.stats["holdout"]}  # fmt: skip


def _train(recipe: Any) -> dict[str, Any]:
    from rsi_hub.train import train

    result = train(recipe)
    evidence = result.evidence
    return {
        "steps": evidence.optimizer_steps,
        "first_loss": evidence.first_loss,
        "last_loss": evidence.last_loss,
        "dataset_sha256": evidence.dataset_sha256,
    }


def _evaluate(config: ReplicateConfig, run: Path, model: str) -> dict[str, Any]:
    from rsi_hub.evaluate import evaluate_run
    from rsi_hub.evaluate.config import EvalConfig

    outcomes = evaluate_run(
        EvalConfig(
            run=run,
            suite=",".join(_suites(config, model)),
            limit=config.eval_limit(model),
            batch_size=config.eval_batch_size,
            max_gen_toks=config.eval_max_new_tokens,
        ),
        progress=print,
    )
    return {o.suite: {t: dict(m) for t, m in o.metrics.items()} for o in outcomes}


def replication_stages(config: ReplicateConfig, layout: Layout) -> list[Stage]:
    """Every training, sampling and evaluation stage of the replication, in order (the verdict,
    report and release stages follow in `replicate`)."""
    recipe0 = _recipe(
        config.round0_recipe,
        # The replication's own paths come last: a --round0-set cannot move them.
        [
            f"seed={config.seed}",
            *config.round0_set,
            f"model={layout.init}",
            f"dataset={layout.data0}",
            f"output_dir={layout.round0}",
        ],
    )
    start1 = layout.round0 if config.round1_start == "continue" else layout.init
    teacher_data = str(layout.teacher / "data.jsonl")
    recipe1 = _recipe(
        config.round1_recipe,
        # The replication's own paths come last: a --round1-set cannot move them.
        [
            f"seed={config.seed}",
            *config.round1_set,
            f"model={start1}",
            f"dataset={layout.data1}",
            f"output_dir={layout.round1}",
        ],
    )
    size = _recipe(config.round0_recipe, list(config.round0_set)).model  # the init's size
    from rsi_hub.train.recipes import RANDOM_INIT_MODELS

    if size not in RANDOM_INIT_MODELS:
        raise ExperimentInputError(
            f"round 0's recipe {config.round0_recipe} starts from {size!r}; a replication starts "
            f"from a random init: one of {', '.join(RANDOM_INIT_MODELS)}.",
            field="round0_recipe",
        )
    round0_prompts = config.round0_prompts or _mix_count(recipe0.mix)
    from rsi_hub.data.mix import parse_mix

    sources0 = {item.name: teacher_data for item in parse_mix(recipe0.mix)}
    sources1 = {"rft": str(layout.samples1 / "data.jsonl"), "teacher": teacher_data}
    sources1 = {item.name: sources1.get(item.name, "") for item in parse_mix(recipe1.mix)}
    if not all(sources1.values()):
        raise ExperimentInputError(
            f"round 1's mix {recipe1.mix!r} may name only rft (its own samples) and teacher "
            "(replay).",
            field="round1_recipe",
        )

    from rsi_hub.synth.backends import REFERENCE_MODEL

    def train_stage(name: str, recipe: Any, inputs: tuple[str, ...]) -> Stage:
        run = Path(recipe.output_dir)
        return Stage(name, {"recipe": recipe.to_dict()}, inputs, lambda: _run_files(run),
                     lambda: _train(recipe), clean=(run,))  # fmt: skip

    def eval_stage(model: str, inputs: tuple[str, ...]) -> Stage:
        run = getattr(layout, model)
        settings = {
            "suites": _suites(config, model), "limit": config.eval_limit(model),
            "max_new_tokens": config.eval_max_new_tokens,
        }  # fmt: skip
        return Stage(
            f"eval_{model}",
            settings,
            inputs,
            lambda: _eval_files(run, _suites(config, model)),
            lambda: _evaluate(config, run, model),
            clean=tuple(eval_dir(run, s) for s in _suites(config, model)),
        )

    sampling = {
        "k": config.rft_k, "temperature": config.rft_temperature,
        "max_new_tokens": config.rft_max_new_tokens, "seed": config.seed,
    }  # fmt: skip
    return [
        Stage(
            "split",
            {
                "seed": config.seed,
                "round0": round0_prompts,
                "fresh": config.rft_prompts,
                "only_checks": config.rft_only_checks,
            },
            (),
            lambda: [layout.prompts("round0"), layout.prompts("fresh")],
            lambda: _split(config, layout, round0_prompts),
        ),
        Stage(
            "teacher",
            {"backend": "reference", "filler": config.teacher_filler},
            (),
            lambda: [layout.teacher / "data.jsonl", provenance_path(layout.teacher)],
            lambda: _synth(
                model=REFERENCE_MODEL,
                out=layout.teacher,
                k=1,
                backend="reference",
                prompts_file=layout.prompts("round0"),
                teacher_filler=config.teacher_filler,
            ),
            clean=(layout.teacher,),
            input_files=(layout.prompts("round0"),),
        ),
        Stage(
            "init",
            {"size": size, "seed": config.seed},
            (),
            lambda: _run_files(layout.init),
            lambda: _build_init(layout.init, size, config.seed),
            clean=(layout.init,),
        ),
        Stage(
            "prep0",
            {
                "mix": recipe0.mix,
                "system": recipe0.system,
                "max_length": recipe0.max_length,
                "seed": recipe0.seed,
            },
            ("teacher", "init"),
            lambda: files_under(layout.data0),
            lambda: _prep(recipe0.mix, sources0, layout.init, recipe0, layout.data0),
        ),
        eval_stage("init", ("init",)),
        train_stage("round0", recipe0, ("prep0", "init")),
        eval_stage("round0", ("round0",)),
        Stage(
            "sample1",
            {**sampling, "batch_size": config.rft_batch_size},
            ("round0",),
            lambda: [layout.samples1 / "data.jsonl", provenance_path(layout.samples1)],
            lambda: _synth(
                model=layout.round0,
                out=layout.samples1,
                k=config.rft_k,
                backend="hf",
                prompts_file=layout.prompts("fresh"),
                temperature=config.rft_temperature,
                max_new_tokens=config.rft_max_new_tokens,
                seed=config.seed,
                batch_size=config.rft_batch_size,
            ),
            clean=(layout.samples1,),
            input_files=(layout.prompts("fresh"),),
        ),
        Stage(
            "prep1",
            {
                "mix": recipe1.mix,
                "system": recipe1.system,
                "max_length": recipe1.max_length,
                "seed": recipe1.seed,
            },
            ("sample1", "teacher", "round0"),
            lambda: files_under(layout.data1),
            lambda: _prep_round1(recipe1, sources1, layout),
        ),
        train_stage("round1", recipe1, ("prep1", "round0" if start1 == layout.round0 else "init")),
        eval_stage("round1", ("round1",)),
    ]


#: Stages nothing but the verdicts reads: they may run in a second process (`BackgroundLane`).
BACKGROUND_STAGES = ("eval_init", "eval_round0")
#: With a background lane, the stages before this one run on one thread each, beside the lane;
#: this one and those after it start when the lane is done and use every core.
WHOLE_MACHINE_FROM = "sample1"


def stage_runner(config: ReplicateConfig) -> StageRunner:
    """The runner of `config`'s stages: its ledger `OUT/replicate.json` records the settings (as
    JSON) and its budget is `--minutes`."""
    return StageRunner(
        config.out_dir,
        config=json.loads(json.dumps(dataclasses.asdict(config), default=str)),
        budget_s=None if config.minutes is None else config.minutes * 60,
    )


def run_stages(runner: StageRunner, stages: list[Stage], *, background: bool) -> None:
    """Run `stages` in order (every stage is done when this returns).

    With `background`, the `BACKGROUND_STAGES` run in a worker process beside the stages after
    them, all on one torch thread, until `WHOLE_MACHINE_FROM`, which waits for the lane. Each
    stage's thread count is fixed by this schedule and never by timing, so the same settings give
    the same numbers (the float summation order, and so the last bits, depend on the threads).
    """
    if not background:
        for stage in stages:
            runner.run(stage)
        return
    import torch

    split = next((i for i, s in enumerate(stages) if s.name == WHOLE_MACHINE_FROM), len(stages))
    lane = BackgroundLane(runner)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for stage in stages[:split]:
            if stage.name in BACKGROUND_STAGES:
                lane.submit(stage)
            else:
                runner.run(stage)
                lane.poll()
        lane.finish()
    except BaseException:
        lane.abort()
        raise
    finally:
        torch.set_num_threads(threads)
    for stage in stages[split:]:
        runner.run(stage)


def _build_init(out: Path, size: str, seed: int) -> dict[str, Any]:
    from rsi_hub.tiny import build_tiny

    build_tiny(out, seed=seed, force=True, size=size)
    return {"size": size, "seed": seed}


def _prep_round1(recipe: Any, sources: dict[str, str], layout: Layout) -> dict[str, Any]:
    """Prepare round 1's mix; when round 0 passed none of its samples, train on the rest of the
    mix (teacher replay) and say so in the summary the card states, or stop when nothing is left.
    """
    from rsi_hub.data.mix import format_mix, parse_mix

    samples = Path(sources.get("rft", layout.samples1 / "data.jsonl"))
    mix = recipe.mix
    empty = "rft" in sources and (not samples.is_file() or samples.stat().st_size == 0)
    if empty:
        rest = [item for item in parse_mix(mix) if item.name != "rft"]
        if not rest:
            raise ExperimentError(
                f"round 1: round 0 passed none of its samples ({samples} is empty), so there is "
                "nothing of its own to train on; sample more (--rft-prompts, --rft-k, "
                "--rft-temperature), train round 0 longer, or replay teacher rows "
                "(--round1-set mix=rft:all,teacher:N)."
            )
        mix = format_mix(rest)
        print(
            f"[replicate] round 1: round 0 passed none of its samples; training on {mix} only",
            flush=True,
        )
    summary = _prep(mix, {k: v for k, v in sources.items() if k != "rft" or not empty},
                    layout.round0, recipe, layout.data1)  # fmt: skip
    return {**summary, "mix": mix, "own_samples": summary["per_source"].get("rft", 0)}


def replicate(config: ReplicateConfig) -> ReplicationResult:
    """Run (or resume) the replication `config` describes; see the module docstring.

    Returns:
        The stages' outcomes, wall times, verdicts, per-model scores, winner and release folder.

    Raises:
        ExperimentInputError: a bad setting, or a `--minutes` budget the estimate exceeds.
        ExperimentError: the budget ran out between stages, or a stage cannot go on.
        RsiHubError: any stage's own error (it names the file and the fix).
    """
    started = time.monotonic()
    layout = Layout(config.out_dir)
    config.out_dir.mkdir(parents=True, exist_ok=True)
    stages = replication_stages(config, layout)
    runner = stage_runner(config)
    pending = [s for s in stages if s.name not in runner.ledger.stages]
    if config.minutes is not None:
        report.check_estimate(config, pending, config.minutes * 60)
    run_stages(runner, stages, background=config.background_evals)

    rule_path = report.guards_file(config.facts)
    after = [
        Stage(
            "compare",
            {"guards": rule_path.read_text(encoding="utf-8")},
            ("eval_init", "eval_round0", "eval_round1"),
            lambda: [
                layout.compare / "round0_vs_init.json",
                layout.compare / "round1_vs_round0.json",
            ],
            lambda: report.compare_rounds(layout.out, rule_path),
        ),
        Stage(
            "failures",
            {},
            ("eval_init", "eval_round0", "eval_round1"),
            lambda: [layout.failures / f"{m}.json" for m in MODELS],
            lambda: report.write_failures(layout.out, MODELS),
        ),
        Stage(
            "power",
            {},
            ("eval_round0",),
            lambda: [layout.out / "power.json"],
            lambda: report.write_power(layout.out),
        ),
    ]
    for stage in after:
        runner.run(stage)
    winner = report.winner(layout.out)
    report_stage = Stage(
        "report",
        {"winner": winner, "facts": config.facts},
        ("compare", "failures", "power", "round0", "round1", "init"),
        lambda: [
            layout.out / winner / REPLICATION_REPORT_FILE,
            layout.out / winner / DOSE_RESPONSE_FILE,
        ],
        lambda: report.write_report(layout.out, winner, rule_path, runner.ledger.stages),
    )
    runner.run(report_stage)
    release_dir = layout.release(config.facts)
    runner.run(
        Stage(
            "release",
            {"winner": winner, "facts": config.facts},
            ("report",),
            lambda: files_under(release_dir),
            lambda: report.release_winner(layout.out / winner, config.facts, release_dir),
        ),
    )
    walls = {o.name: runner.recorded_wall(o.name) for o in runner.outcomes}
    comparisons = {
        name: json.loads((layout.compare / f"{name}.json").read_text(encoding="utf-8"))
        for name in ("round0_vs_init", "round1_vs_round0")
    }
    scores = {m: report.scores(layout.out / m) for m in MODELS}
    return ReplicationResult(
        config.out_dir,
        runner.outcomes,
        walls,
        comparisons,
        scores,
        winner,
        release_dir,
        time.monotonic() - started,
    )
