"""`rsi-hub runs`: the arms table from constructed run directories."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsi_hub.cli import main
from rsi_hub.experiments import runs_table
from tests.experiment_logs import make_run, outcomes_with

N = 60


@pytest.fixture(scope="module")
def arms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    base = list(range(40))  # the incumbent passes documents 0..39
    make_run(
        root, "b1", seed=1, if818=outcomes_with(N, base), if263=outcomes_with(263, range(199)),
        ev4=105, pref=0.6182, mmlu=0.7158,
        evidence={"kind": "rsi-hub training run", "recipe": {"description": "b1: general mix, 5,600 steps"}},
    )  # fmt: skip
    # Gains 12 documents, loses none: significant.
    make_run(
        root, "LA2b200s", seed=2, if818=outcomes_with(N, range(52)),
        if263=outcomes_with(263, range(193)), ev4=104, pref=0.6182, mmlu=0.7149,
        evidence={"kind": "rsi-hub training run", "hyperparameters": {"max_steps": 200, "learning_rate": 4e-7},
                  "data": {"mix": "iflensyn:33000"}},
    )  # fmt: skip
    # Breaks the MMLU guard; IF-818 within noise.
    make_run(
        root, "simpoN", seed=3, if818=outcomes_with(N, [*range(38), 45, 46]),
        if263=outcomes_with(263, range(195)), ev4=104, pref=0.6162, mmlu=0.6930,
    )  # fmt: skip
    # Only IF-818: guards incomplete.
    make_run(
        root, "soup7", seed=4, if818=outcomes_with(N, range(35)),
        evidence={"kind": "weight soup", "ingredients": [
            {"name": "a", "weight": 0.5}, {"name": "b", "weight": 0.5}]},
    )  # fmt: skip
    return root


def test_rows_and_markdown(arms: Path) -> None:
    runs = runs_table.discover_runs(arms)
    assert [r.name for r in runs] == ["LA2b200s", "b1", "simpoN", "soup7"]
    rows = runs_table.build_rows(runs, incumbent=arms / "b1")
    by_name = {r.name: r for r in rows}
    assert [r.name for r in rows] == ["b1", "LA2b200s", "simpoN", "soup7"]
    assert by_name["b1"].cells == {
        "if818": "40/60", "if263": "199/263", "ev4": "105", "pref": "0.6182", "mmlu": "0.7158",
    }  # fmt: skip
    assert by_name["LA2b200s"].delta == 12
    # Exact McNemar, 12 discordant all one way: 2 / 2**12.
    assert by_name["LA2b200s"].p == pytest.approx(2 / 2**12)
    assert by_name["simpoN"].delta == 0 and by_name["simpoN"].p == pytest.approx(1.0)
    assert by_name["b1"].guards == "yes" and by_name["LA2b200s"].guards == "yes"
    assert by_name["simpoN"].guards == "no: MMLU 0.693 < 0.71; PREF 0.6162 < 0.618"
    assert by_name["soup7"].guards == "incomplete: IF263, MMLU, EV4, PREF"
    assert by_name["soup7"].changed == "weight soup: a 0.5 + b 0.5"
    assert by_name["LA2b200s"].changed == "200 steps, iflensyn:33000, LR 4e-07"
    assert by_name["b1"].changed == "b1: general mix, 5,600 steps"

    text = runs_table.format_runs_table(rows, incumbent="b1", markdown=True)
    lines = text.splitlines()
    assert lines[0] == (
        "| arm | what changed | IF-818 (k0) | IF263 | EV4 | PREF acc_norm | MMLU "
        "| paired p vs b1 | guards passed |"
    )
    assert lines[2].startswith("| b1 | b1: general mix, 5,600 steps | 40/60 | 199/263 | 105 |")
    assert "| 4.9e-4 (+12) | yes |" in lines[3]
    assert lines[5].startswith("| soup7 |") and "| — | — | — | — |" in lines[5]


def test_cli_with_sweep_manifest(
    arms: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rsi_hub.experiments import sweep
    from rsi_hub.experiments.recipes import ResolvedArm

    arms_ = sweep.plan_sweep(
        "LA2b200s", {"max_steps": ["200"]}, name_template="LA2b{max_steps}s",
        resolve=lambda r, o: ResolvedArm("sft", 4, arms / o["name"], {}),
    )  # fmt: skip
    sweep.write_manifest(tmp_path, "LA2b200s", {"max_steps": ["200"]}, arms_, "local")
    assert main(["runs", str(arms), "--incumbent", "b1", "--sweep", str(tmp_path),
                 "--suite", "if818"]) == 0  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["arm", "what", "changed", "IF-818", "(k0)", "paired", "p", "vs",
                              "b1", "guards", "passed"]  # fmt: skip
    assert len(out) == 4  # header, rule, b1 (incumbent), LA2b200s (the sweep's only arm)
    assert out[3].split()[:3] == ["LA2b200s", "max_steps=200", "52/60"]


def test_limited_runs_are_marked(tmp_path: Path) -> None:
    make_run(tmp_path, "quick", seed=5, if818=[True, False, True], limit=3)
    rows = runs_table.build_rows(runs_table.discover_runs(tmp_path), suites=["if818"])
    assert rows[0].cells["if818"] == "2/3*"
    text = runs_table.format_runs_table(rows, suites=["if818"])
    assert "* scored with --limit" in text


def test_job_states_without_slurm_name_the_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    from rsi_hub.experiments.job_states import arm_job_states
    from rsi_hub.rundir import SweepArm

    monkeypatch.setenv("PATH", "/nonexistent")  # a laptop reading a cluster's sweep.json
    arms = [
        SweepArm("a", "runs/a", {}, {"jobs": {"train": "7", "eval": "8"}}),
        SweepArm("local", "runs/local", {}, {"jobs": {}}),
    ]
    assert arm_job_states(arms) == {
        "a": "train job 7; eval job 8 (states unknown: `sacct` is not on the PATH: run this on "
        "a Slurm cluster (for a local one: `bash scripts/slurm_local.sh up` and export the "
        "SLURM_CONF it prints).)"
    }


def test_a_bare_incumbent_name_is_the_run_in_dir_even_beside_a_same_named_folder(
    arms: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The working folder holds an unrelated (unscored) `b1`: the table's own b1 is meant.
    (tmp_path / "b1").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["runs", str(arms), "--incumbent", "b1", "--suite", "if818"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[2:]] == ["b1", "LA2b200s", "simpoN", "soup7"]
    assert "4.9e-4" in out[3]  # paired against the table's b1, not the empty folder
