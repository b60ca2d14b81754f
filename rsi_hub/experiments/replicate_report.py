"""What `rsi-hub replicate` concludes from its stages: verdicts, failures, power, the winner's record.

Every figure is read back from the evaluation folders through evaluate's own readers
(`compare_runs`, `failure_report`, `power_report`), and every round's entry carries the sha256 of
the weights its scores were measured on, checked against the weights on disk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rsi_hub.errors import ExperimentError, ExperimentInputError
from rsi_hub.rundir import (
    ReplicationReport,
    TrainingEvidence,
    dose_response_path,
    read_json_object,
    weights_sha256,
    write_json_atomic,
)

GUARDS_FILE = "guards.yaml"
# Seconds per unit on this project's 2-core CPU machine, from the full run at the shipped
# defaults (tests/bench/README_replicate.md): a training row of the nano model (round 0, on one
# thread beside the evaluations), a prompt of IF-818/IF263/EV4 for a trained model (it stops at
# <|im_end|>), an IF-818 prompt of the untrained init (its answers run to 2,048 tokens), one
# sampled answer of round 1; round 1 and its evaluations run on both cores.
TRAIN_S_PER_ROW = 764.5 / (1200 * 16)
TRAIN_S_PER_ROW_BOTH_CORES = 151.0 / (400 * 16)
EVAL_S_PER_PROMPT = 70.1 / (818 + 263 + 82)
EVAL_S_PER_PROMPT_BOTH_CORES = 48.8 / (818 + 263 + 82)
EVAL_INIT_S_PER_PROMPT = 811.7 / 818
SAMPLE_S_PER_ANSWER = 221.9 / (1500 * 2)
FIXED_S = 30  # split, teacher, init, prep, compare, failures, report, release
SUITE_SIZES = {"if818": 818, "if263": 263, "ev4": 82}


def _rows_per_step(recipe: Mapping[str, Any]) -> int:
    return int(recipe["per_device_train_batch_size"]) * int(recipe["gradient_accumulation_steps"])


def estimate_s(config: Any, stages: Sequence[Any]) -> dict[str, float]:
    """Estimated seconds of each pending stage on this machine (see the constants above)."""
    out: dict[str, float] = {}
    for stage in stages:
        if stage.name in ("round0", "round1"):
            recipe = stage.settings["recipe"]
            per = TRAIN_S_PER_ROW if stage.name == "round0" else TRAIN_S_PER_ROW_BOTH_CORES
            out[stage.name] = recipe["max_steps"] * _rows_per_step(recipe) * per
        elif stage.name.startswith("eval_"):
            per = {"eval_init": EVAL_INIT_S_PER_PROMPT, "eval_round0": EVAL_S_PER_PROMPT}.get(
                stage.name, EVAL_S_PER_PROMPT_BOTH_CORES
            )
            limit = stage.settings["limit"]
            out[stage.name] = per * sum(
                SUITE_SIZES[s] if limit is None else min(limit, SUITE_SIZES[s])
                for s in stage.settings["suites"]
            )
        elif stage.name == "sample1":
            out[stage.name] = config.rft_prompts * config.rft_k * SAMPLE_S_PER_ANSWER
    out["other stages"] = FIXED_S
    return out


def estimated_wall_s(config: Any, estimate: Mapping[str, float]) -> float:
    """The wall time of `estimate`'s stages: with background evaluations, the init's and round
    0's evaluations run beside round 0's training, so that part takes the longer of the two."""
    total = sum(estimate.values())
    if not getattr(config, "background_evals", False):
        return total
    lane = sum(estimate.get(name, 0.0) for name in ("eval_init", "eval_round0"))
    return total - min(lane, estimate.get("round0", 0.0))


def check_estimate(config: Any, pending: Sequence[Any], budget_s: float) -> None:
    """Refuse at once a budget the pending stages' estimate exceeds, naming what would fit.

    Raises:
        ExperimentInputError: the estimate is over the budget.
    """
    estimate = estimate_s(config, pending)
    total = estimated_wall_s(config, estimate)
    if total <= budget_s:
        return
    parts = ", ".join(f"{name} {seconds / 60:.1f}" for name, seconds in estimate.items())
    train = sum(v for k, v in estimate.items() if k in ("round0", "round1"))
    spare = budget_s - (total - train)
    if train > 0 and spare > 0:
        hint = (
            f"training would fit in {spare / 60:.1f} min: scale max_steps by "
            f"{spare / train:.2f} (--round0-set / --round1-set max_steps=N)"
        )
    else:
        hint = (
            f"the stages other than training alone need {(total - train) / 60:.1f} min: sample "
            "fewer (--rft-prompts, --rft-k) or score the init on fewer prompts (--init-limit)"
        )
    raise ExperimentInputError(
        f"--minutes {budget_s / 60:g}: the pending stages need about {total / 60:.1f} min on this "
        f"machine ({parts} min); {hint}, or raise --minutes.",
        field="minutes",
    )


def guards_file(facts: str) -> Path:
    """`release/<facts>/guards.yaml`: the guards, thresholds and reasons of this scale."""
    from rsi_hub.release.facts import facts_root

    path = facts_root() / facts / GUARDS_FILE
    if not path.is_file():
        raise ExperimentInputError(
            f"{path}: missing; a replication's facts folder states its guards there "
            "(see release/nano/guards.yaml).",
            path=path,
            field="facts",
        )
    return path


PAIRS = (("round0_vs_init", "init", "round0"), ("round1_vs_round0", "round0", "round1"))


def compare_rounds(out: Path, rule_path: Path) -> dict[str, Any]:
    """`compare` round 0 vs init and round 1 vs round 0 under the facts' guards; write the JSON."""
    from rsi_hub.evaluate.compare import compare_runs, format_comparison, load_guard_rule

    rule = load_guard_rule(rule_path)
    verdicts = {}
    for name, a, b in PAIRS:
        comparison = compare_runs(out / a, out / b, rule=rule)
        print(format_comparison(comparison), flush=True)
        write_json_atomic(out / "compare" / f"{name}.json", comparison.to_json())
        verdicts[name] = comparison.verdict
    return verdicts


def write_failures(out: Path, models: Sequence[str]) -> dict[str, Any]:
    """`failures` of each model on IF-818 into `OUT/failures/<model>.json`."""
    from rsi_hub.evaluate.failures import failure_report

    summary = {}
    for model in models:
        report = failure_report(out / model)
        print(report.render(), end="", flush=True)
        write_json_atomic(out / "failures" / f"{model}.json", report.to_json())
        summary[model] = f"{report.analysis.passed}/{report.analysis.n}"
    return summary


def _prompt_rate(run: Path) -> tuple[int, int]:
    from rsi_hub.experiments import evalio

    result = evalio.read_suite(run, "if818")
    return result.passes, result.n


def power_statements(baseline: float) -> tuple[list[str], dict[str, Any]]:
    """What IF-818 and IF-3k can detect at round 0's pass rate (exact McNemar, 80 % power)."""
    from rsi_hub.evaluate.power_report import PowerConfig, power_report

    lines, reports = [], {}
    for suite, label in (("if818", "IF-818"), ("if3k", "IF-3k")):
        report = power_report(PowerConfig(baseline=baseline, suite=suite))
        reports[suite] = report.to_json()
        gain = report.min_gain.get("exact")
        shown = "no gain up to 100 %" if gain is None else f"{100 * gain:.1f} points"
        lines.append(
            f"{label} (n = {report.config.size}) at round 0's {100 * baseline:.1f} %: the minimum "
            f"paired gain the acceptance rule detects with 80 % power at alpha 0.05 is {shown} "
            f"({report.config.model.describe(baseline)})."
        )
    return lines, reports


def write_power(out: Path) -> dict[str, Any]:
    """`power` for IF-818 and IF-3k at round 0's IF-818 pass rate into `OUT/power.json`."""
    passes, n = _prompt_rate(out / "round0")
    lines, reports = power_statements(passes / n)
    write_json_atomic(out / "power.json", {"baseline": passes / n, "statements": lines,
                                           "reports": reports})  # fmt: skip
    for line in lines:
        print(line, flush=True)
    return {"baseline": passes / n}


def winner(out: Path) -> str:
    """Round 1 when `compare` accepted it over round 0; round 0 otherwise (the SFT baseline)."""
    data = read_json_object(out / "compare" / "round1_vs_round0.json", regenerate="re-run it")
    return "round1" if data.get("accepted") is True else "round0"


def scores(run: Path) -> dict[str, Any]:
    """Prompt- and check-level IF-818 figures of an evaluated run (check level: (prompt, check
    type) pairs, as `rsi-hub failures` counts them)."""
    from rsi_hub.evaluate.failures import failure_report

    report = failure_report(run).to_json()
    carrying = sum(t["carrying"] for t in report["by_type"].values())
    failing = sum(t["failing"] for t in report["by_type"].values())
    return {
        "n": report["n"],
        "passed": report["passed"],
        "prompt": report["passed"] / report["n"],
        "check_passed": carrying - failing,
        "check_n": carrying,
        "check": (carrying - failing) / carrying if carrying else 0.0,
        "by_type": {
            k: [v["carrying"] - v["failing"], v["carrying"]] for k, v in report["by_type"].items()
        },
    }


def _guard_values(run: Path) -> dict[str, Any]:
    from rsi_hub.evaluate import store
    from rsi_hub.evaluate.protocol import SUITES

    values: dict[str, Any] = {}
    for suite in ("if263", "ev4"):
        if not store.has_suite_dir(run, suite):
            continue
        record = store.read_suite_dir(run, suite)
        spec = SUITES[suite]
        values[suite] = {
            "value": record.metrics(spec.tasks[0]).get(spec.score_metric),
            "limit": record.meta.limit,
            "weights_sha256": record.meta.weights_sha256,
        }
    return values


def _round_entry(out: Path, model: str, label: str) -> dict[str, Any]:
    from rsi_hub.experiments import evalio

    run = out / model
    result = evalio.read_suite(run, "if818")
    weights = weights_sha256(run)
    guards = _guard_values(run)
    bound = {result.weights_sha256, *(g["weights_sha256"] for g in guards.values())}
    if bound != {weights}:
        raise ExperimentError(
            f"{run}: its evaluation results were scored on other weights than those on disk "
            f"({weights[:12]}…); re-run `rsi-hub replicate` to re-evaluate it."
        )
    evidence = TrainingEvidence.read_if_any(run)
    steps = 0 if model == "init" or evidence is None else evidence.optimizer_steps
    return {
        "model": model,
        "label": label,
        "weights_sha256": weights,
        "steps": steps,
        "served_configuration": result.meta.served_configuration is not False,
        "limit": result.meta.limit,
        **scores(run),
        "guards": {k: v["value"] for k, v in guards.items()},
        "guard_limits": {k: v["limit"] for k, v in guards.items()},
    }


def _guards(rule_path: Path) -> list[dict[str, Any]]:
    import yaml

    data = yaml.safe_load(rule_path.read_text(encoding="utf-8"))
    return [
        {k: g.get(k) for k in ("label", "suite", "metric", "threshold", "max_drop", "why")}
        for g in data["guards"]
    ]


LABELS = {"init": "untrained init", "round0": "round 0 (teacher SFT)", "round1": "round 1 (RFT)"}


def write_report(
    out: Path, winner_model: str, rule_path: Path, stages: Mapping[str, Any]
) -> dict[str, Any]:
    """The winner's `replication.json` and dose-response plot (IF-818 pass rate per round)."""
    from rsi_hub.checker import CHECKER_VERSION
    from rsi_hub.experiments.plots import DosePoint, plot_dose_response

    rounds = [_round_entry(out, m, LABELS[m]) for m in LABELS]
    comparisons = []
    for name, a, b in PAIRS:
        data = read_json_object(out / "compare" / f"{name}.json", regenerate="re-run it")
        comparisons.append({**data, "name": name, "incumbent": a, "candidate": b})
    power = read_json_object(out / "power.json", regenerate="re-run it")
    walls = {name: record.get("wall_s") for name, record in stages.items()}
    sampled = (stages.get("sample1") or {}).get("summary") or {}
    prepared = (stages.get("prep1") or {}).get("summary") or {}
    round1_data = {
        "fresh_prompts": sampled.get("prompts"),
        "samples_generated": sampled.get("rows_generated"),
        "samples_kept": sampled.get("rows_kept"),
        "mix": prepared.get("mix"),
        "rows_per_source": prepared.get("per_source"),
    }
    record = ReplicationReport(
        winner=winner_model,
        rounds=rounds,
        comparisons=comparisons,
        failures={r["model"]: r["by_type"] for r in rounds},
        power=list(power["statements"]),
        guards=_guards(rule_path),
        protocol="IF-818 in the served configuration: k0 system message, chat template, greedy, "
        "stop at <|im_end|>, at most 2,048 new tokens",
        checker_version=CHECKER_VERSION,
        extra={"stage_wall_s": walls, "round1_data": round1_data},
    )
    run = out / winner_model
    record.write(run)
    points = [DosePoint(r["label"], i, r["passed"], r["n"]) for i, r in enumerate(rounds)]
    plot_dose_response(
        points, dose_response_path(run), x_label="round (0: untrained init)",
        title="IF-818 prompt-level pass rate over the replication's rounds",
    )  # fmt: skip
    return {"winner": winner_model}


def release_winner(run: Path, facts: str, folder: Path) -> dict[str, Any]:
    """`release` the winner with the facts `release/<facts>/` into `folder` (stage + validate)."""
    from rsi_hub.release import release

    outcome = release(run, name=facts, out=folder, force=True)
    return {
        "folder": str(outcome.staged.folder),
        "weights_sha256": outcome.staged.manifest.weights_sha256,
    }


def format_summary(result: Any) -> str:
    """The closing table: each stage's wall time (and whether this call ran it), the figures."""
    lines = ["stage            wall      this call"]
    for outcome in result.outcomes:
        wall = result.walls.get(outcome.name, 0.0)
        lines.append(
            f"{outcome.name:<16} {wall:>7.1f} s  {'skipped' if outcome.skipped else 'ran'}"
        )
    lines.append(f"{'total (recorded)':<16} {sum(result.walls.values()):>7.1f} s")
    for model, s in result.scores.items():
        lines.append(
            f"{LABELS[model]}: IF-818 prompt-level {s['prompt']:.1%} ({s['passed']}/{s['n']}), "
            f"check-level {s['check']:.1%} ({s['check_passed']}/{s['check_n']})"
        )
    for name, data in result.comparisons.items():
        lines.append(f"{name}: McNemar p = {data['mcnemar_p']:.3g}; {data['verdict']}")
    lines.append(f"winner: {result.winner}; released to {result.release}")
    return "\n".join(lines)
