"""Did a short round 0 teach the model anything? The learning signal at check level.

`round0_signal` runs the replication's round-0 stages (split -> teacher -> init -> prep0 ->
round0 -> eval_init -> eval_round0: the very `Stage`s `rsi-hub replicate` runs, so the data,
template, masks, training and evaluation are the package's own) and pairs the untrained init's
and round 0's IF-818 verdicts on the same held-out prompts at check level: one pair per (prompt,
check type), passing when the logged answer misses no check of that type (the `miss_<type>`
metric each document logs, the count `rsi-hub failures` makes). The exact McNemar test on the
discordant pairs says whether round 0 follows more checks than chance would give.

The signal test (`tests/test_signal.py`) and `rsi-hub demo` run it at small budgets; a wrong
loss mask, a training template other than the served one, or an evaluation that stops at the
wrong token each remove the signal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rsi_hub.errors import EvaluationFileError
from rsi_hub.experiments.replicate import Layout, replication_stages, stage_runner
from rsi_hub.experiments.replicate_config import PRIMARY_SUITE, ReplicateConfig

#: The signal budget (the signal test's and the demo's): training steps of 16 rows, teacher rows,
#: held-out IF-818 prompts scored, and the answer-length cap of that smoke evaluation (the
#: teacher's answers are far shorter; the untrained init's would run to 2,048 tokens). The
#: experiments behind the numbers: tests/bench/README_replicate.md, "The signal budget".
SIGNAL_STEPS = 150
SIGNAL_TEACHER_ROWS = 2400
SIGNAL_EVAL_PROMPTS = 100
SIGNAL_MAX_NEW_TOKENS = 128

#: The stages of round 0 and its two evaluations, in the order `replicate` runs them.
ROUND0_STAGES = ("split", "teacher", "init", "prep0", "round0", "eval_init", "eval_round0")
_MISS = "miss_"


@dataclass(frozen=True)
class CheckLevelPairs:
    """Two models' paired verdicts per (prompt, check type) on the prompts both were scored on."""

    n: int
    init_passed: int
    trained_passed: int
    init_only: int
    trained_only: int
    p_value: float

    @property
    def init_rate(self) -> float:
        """The untrained init's check-level pass rate."""
        return self.init_passed / self.n if self.n else 0.0

    @property
    def trained_rate(self) -> float:
        """The trained model's check-level pass rate."""
        return self.trained_passed / self.n if self.n else 0.0

    def significant_gain(self, alpha: float) -> bool:
        """The trained model passes more pairs, and the exact McNemar p is below `alpha`."""
        return self.trained_only > self.init_only and self.p_value < alpha

    def describe(self) -> str:
        """One line: both rates, the discordant pairs and the p value."""
        return (
            f"check level ({self.n} prompt x check-type pairs): init {self.init_rate:.1%} "
            f"({self.init_passed}) -> trained {self.trained_rate:.1%} ({self.trained_passed}); "
            f"init only {self.init_only}, trained only {self.trained_only}, exact McNemar "
            f"p = {self.p_value:.2g}"
        )


@dataclass(frozen=True)
class Round0Signal:
    """What `round0_signal` ran and found."""

    out: Path
    init: Path
    round0: Path
    prompts: tuple[int, int, int]  # (scored, init passed, round 0 passed), prompt level
    checks: CheckLevelPairs
    walls: dict[str, float]


def signal_config(
    out: str | Path,
    *,
    steps: int = SIGNAL_STEPS,
    teacher_rows: int = SIGNAL_TEACHER_ROWS,
    eval_prompts: int = SIGNAL_EVAL_PROMPTS,
    max_new_tokens: int = SIGNAL_MAX_NEW_TOKENS,
    seed: int = 0,
) -> ReplicateConfig:
    """The replication's settings for a short round 0 scored on IF-818 only (no guards).

    Round 0's recipe is `nano` with `steps` and a mix of `teacher_rows` teacher answers; every
    model is scored on the first `eval_prompts` IF-818 prompts with answers cut at
    `max_new_tokens` (a smoke protocol, recorded as not served in the evaluation's meta).
    """
    return ReplicateConfig(
        "nano",
        out=out,
        seed=seed,
        limit=eval_prompts,
        round0_set=(f"max_steps={steps}", f"mix=rft:{teacher_rows}"),
        rft_prompts=1,  # round 1 never runs here; the split still draws its fresh prompts
        guards=False,
        eval_max_new_tokens=max_new_tokens,
    )


def check_level_verdicts(
    run: str | Path, suite: str = PRIMARY_SUITE
) -> dict[tuple[str, str], bool]:
    """`{(document id, check type): passed}` from the logged samples of `RUN/eval/<suite>/`.

    Raises:
        EvaluationFileError: the folder is missing, or a sample lacks its `miss_<type>` metrics.
    """
    from rsi_hub.evaluate import store

    record = store.read_suite_dir(run, suite)
    verdicts: dict[tuple[str, str], bool] = {}
    for _, sample in record.samples(suite):
        doc = sample["doc"]
        types = {c["type"] for c in doc["checks"]}
        for check_type in types:
            miss = sample.get(_MISS + check_type)
            if miss is None:
                raise EvaluationFileError(
                    f"{record.folder}: document {doc['id']} lacks {_MISS}{check_type}; "
                    f"re-run `rsi-hub eval {run} --suite {suite}`.",
                    path=record.folder,
                )
            verdicts[(str(doc["id"]), check_type)] = not miss
    return verdicts


def pair_check_levels(init: str | Path, trained: str | Path) -> CheckLevelPairs:
    """Pair two evaluated runs' IF-818 check-level verdicts on the pairs both logged."""
    from rsi_hub.evaluate.stats import mcnemar_exact_p

    a, b = check_level_verdicts(init), check_level_verdicts(trained)
    keys = sorted(a.keys() & b.keys())
    init_only = sum(1 for k in keys if a[k] and not b[k])
    trained_only = sum(1 for k in keys if b[k] and not a[k])
    return CheckLevelPairs(
        n=len(keys),
        init_passed=sum(a[k] for k in keys),
        trained_passed=sum(b[k] for k in keys),
        init_only=init_only,
        trained_only=trained_only,
        p_value=mcnemar_exact_p(init_only, trained_only),
    )


def prompt_verdicts(run: str | Path, suite: str = PRIMARY_SUITE) -> dict[str, bool]:
    """`{document id: passed}` (prompt level) from the logged samples of `RUN/eval/<suite>/`."""
    from rsi_hub.evaluate import store

    samples = store.read_suite_dir(run, suite).samples(suite)
    return {str(s["doc"]["id"]): bool(s["acc"]) for _, s in samples}


def round0_signal(config: ReplicateConfig, *, baseline: str | Path | None = None) -> Round0Signal:
    """Run (or resume) round 0 and both evaluations of `config`, and pair them at check level.

    The stages share `replicate`'s ledger (`OUT/replicate.json`), so a later `rsi-hub replicate`
    on the same folder with the same settings skips them.

    Args:
        config: the replication's settings (`signal_config` gives the signal budget's).
        baseline: an init of the same size and seed already evaluated with the same settings
            (another run's `OUT/init`): round 0 is paired with it and this init is not scored.
    """
    layout = Layout(config.out_dir)
    config.out_dir.mkdir(parents=True, exist_ok=True)
    wanted = [n for n in ROUND0_STAGES if not (baseline is not None and n == "eval_init")]
    stages = [s for s in replication_stages(config, layout) if s.name in wanted]
    runner = stage_runner(config)
    for stage in stages:
        runner.run(stage)
    init_run = layout.init if baseline is None else Path(baseline)
    init, round0 = prompt_verdicts(init_run), prompt_verdicts(layout.round0)
    shared = init.keys() & round0.keys()
    return Round0Signal(
        out=config.out_dir,
        init=init_run,
        round0=layout.round0,
        prompts=(len(shared), sum(init[k] for k in shared), sum(round0[k] for k in shared)),
        checks=pair_check_levels(init_run, layout.round0),
        walls={outcome.name: outcome.wall_s for outcome in runner.outcomes},
    )
