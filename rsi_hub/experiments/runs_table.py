"""The table of arms (card section 3): every run against the suites, the incumbent and the guards.

Built only from what run directories hold: `training_evidence.json` (what the arm is) and
`eval/<suite>/` (scores and per-document logs, read through `rsi_hub.evaluate`). The paired p
and the guard verdicts are `rsi-hub compare`'s own, so the table and `compare` never disagree.
The markdown form is what a release card embeds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rsi_hub import rundir
from rsi_hub.errors import ExperimentFileError, RsiHubError, RunDirError
from rsi_hub.experiments import evalio
from rsi_hub.experiments.tables import format_p, render_table

DEFAULT_SUITES: tuple[str, ...] = ("if818", "if263", "ev4", "pref", "mmlu")
SUITE_LABELS: dict[str, str] = {
    "if818": "IF-818 (k0)",
    "if263": "IF263",
    "if3k": "IF-3k",
    "ev4": "EV4",
    "pref": "PREF acc_norm",
    "mmlu": "MMLU",
}
# Suites reported as pass counts out of the documents, and as 4-decimal rates.
COUNT_SUITES = frozenset({"if818", "if263", "if3k"})
RATE_SUITES = frozenset({"pref", "mmlu"})


def is_run_dir(path: Path) -> bool:
    """A run directory holds weights or evaluation results."""
    return path.is_dir() and (
        (path / "config.json").is_file()
        or rundir.eval_root(path).is_dir()
        or rundir.evidence_path(path).is_file()
    )


def discover_runs(root: str | Path) -> list[Path]:
    """`root` itself if it is a run directory, else its run-directory children in name order."""
    root = Path(root)
    if not root.is_dir():
        raise ExperimentFileError(f"{root} is not a folder of runs.", path=root)
    if is_run_dir(root) and not any(is_run_dir(p) for p in root.iterdir()):
        return [root]
    return sorted((p for p in root.iterdir() if is_run_dir(p)), key=lambda p: p.name)


def _evidence(run: Path) -> rundir.TrainingEvidence | None:
    # The table describes what it can: a run without readable evidence is shown as "—".
    try:
        return rundir.TrainingEvidence.read_if_any(run)
    except RunDirError:
        return None


def what_changed(run: Path, sweep_points: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """One line saying what this arm is: its sweep point, soup, or recipe description."""
    evidence = _evidence(run)
    if sweep_points and run.name in sweep_points:
        point = sweep_points[run.name]
        return ", ".join(f"{k}={v}" for k, v in point.items())
    if evidence is None:
        return "—"
    if evidence.kind == "weight soup":
        parts = [f"{name} {weight:g}" for name, weight in evidence.soup_weights]
        return "weight soup: " + " + ".join(parts)
    recipe = evidence.recipe or {}
    if recipe.get("description"):
        return str(recipe["description"])
    hyper = evidence.hyperparameters or {}
    mix = (evidence.data or {}).get("mix")
    if hyper or mix:
        bits = [f"{hyper['max_steps']} steps" if "max_steps" in hyper else "", mix or ""]
        if "learning_rate" in hyper:
            bits.append(f"LR {hyper['learning_rate']:g}")
        return ", ".join(b for b in bits if b)
    return evidence.kind


def format_score(suite: str, result: evalio.SuiteResult) -> str:
    """A suite cell as the card writes it: `562/818`, `104`, `0.6182`; `*` marks --limit runs."""
    if suite in COUNT_SUITES:
        text = f"{result.passes}/{result.n}"
    elif suite in RATE_SUITES:
        text = f"{result.score:.4f}"
    else:
        text = f"{result.score:g}"
    return text + ("*" if result.meta.limit is not None else "")


@dataclass
class RunRow:
    """One arm of the table."""

    name: str
    run: Path
    changed: str
    cells: dict[str, str]
    primary_passes: int | None
    p: float | None = None
    delta: int | None = None
    guards: str = "—"
    notes: list[str] = field(default_factory=list)
    jobs: str | None = None  # the arm's Slurm jobs and their states (submitted sweeps)


def _guards_cell(run: Path) -> str:
    statuses = evalio.guards(run)
    failed = [g for g in statuses if g.status == "fail"]
    missing = [g for g in statuses if g.status == "missing"]
    if failed:
        return "no: " + "; ".join(f"{g.label} {g.value:g} < {g.threshold:g}" for g in failed)
    if missing:
        return "incomplete: " + ", ".join(g.label for g in missing)
    return "yes"


def build_rows(
    runs: Sequence[Path],
    *,
    suites: Sequence[str] = DEFAULT_SUITES,
    incumbent: Path | None = None,
    primary: str = "if818",
    sweep_points: Mapping[str, Mapping[str, str]] | None = None,
    job_states: Mapping[str, str] | None = None,
) -> list[RunRow]:
    """Read every run's results; compare each to `incumbent` on `primary` (exact McNemar).

    A run folder that does not exist (an arm whose job failed before writing it) gets a row of
    dashes. `job_states` (arm name -> its Slurm jobs' states) fills the `Slurm jobs` column.
    Rows come incumbent first, then by primary pass count (highest first), unscored last.
    """
    rows = []
    for run in runs:
        cells: dict[str, str] = {}
        notes: list[str] = []
        primary_passes = None
        for suite in suites:
            if not evalio.has_suite(run, suite):
                cells[suite] = "—"
                continue
            result = evalio.read_suite(run, suite)
            cells[suite] = format_score(suite, result)
            if result.meta.limit is not None:
                notes.append(f"{suite} scored with --limit {result.meta.limit}")
            if suite == primary:
                primary_passes = result.passes
        row = RunRow(
            run.name, run, what_changed(run, sweep_points), cells, primary_passes, notes=notes
        )
        row.guards = _guards_cell(run) if run.is_dir() else "—"
        row.jobs = (job_states or {}).get(run.name)
        if (
            incumbent is not None
            and run.resolve() != incumbent.resolve()
            and primary_passes is not None
        ):
            try:
                comparison = evalio.compare(incumbent, run, primary)
            except RsiHubError as err:
                row.notes.append(f"no paired test: {err}")
            else:
                row.p = comparison.mcnemar_p
                row.delta = comparison.b - comparison.a
        rows.append(row)
    first = incumbent.resolve() if incumbent is not None else None

    def order(row: RunRow) -> tuple[bool, bool, int, str]:
        return (
            row.run.resolve() != first,
            row.primary_passes is None,
            -(row.primary_passes or 0),
            row.name,
        )

    return sorted(rows, key=order)


def format_runs_table(
    rows: Sequence[RunRow],
    *,
    suites: Sequence[str] = DEFAULT_SUITES,
    incumbent: str | None = None,
    markdown: bool = False,
) -> str:
    """The arms table; notes (limited runs, unpaired runs) follow it."""
    headers = ["arm", "what changed", *(SUITE_LABELS.get(s, s) for s in suites)]
    if incumbent:
        headers.append(f"paired p vs {incumbent}")
    headers.append("guards passed")
    with_jobs = any(row.jobs for row in rows)
    if with_jobs:
        headers.append("Slurm jobs")
    body = []
    for row in rows:
        cells = [row.name, row.changed, *(row.cells[s] for s in suites)]
        if incumbent:
            if row.name == incumbent:
                cells.append("incumbent")
            elif row.p is None:
                cells.append("—")
            else:
                cells.append(f"{format_p(row.p)} ({row.delta:+d})")
        cells.append(row.guards)
        if with_jobs:
            cells.append(row.jobs or "—")
        body.append(cells)
    text = render_table(headers, body, markdown=markdown)
    notes = [f"{row.name}: {note}" for row in rows for note in row.notes]
    if any("*" in c for row in body for c in row):
        notes.insert(0, "* scored with --limit: not comparable to full-suite numbers")
    if notes:
        text += "\n" + "\n".join(("- " if markdown else "  ") + n for n in notes) + "\n"
    return text
