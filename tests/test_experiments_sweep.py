"""Sweeps: grid expansion, arm names, sbatch scripts, submission with dependencies, local runs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rsi_hub.errors import RsiHubError
from rsi_hub.experiments import sweep
from rsi_hub.experiments.recipes import ResolvedArm


def fake_resolve(recipe: str, overrides: dict[str, str]) -> ResolvedArm:
    """Stands in for train's recipe loader: a 4-GPU SFT recipe writing runs/<name>."""
    if "bogus" in overrides:
        raise RsiHubError("unknown recipe key 'bogus'")
    return ResolvedArm("sft", 4, Path("runs") / overrides["name"], {"name": overrides["name"]})


def test_grid_parsing_and_expansion() -> None:
    grid = sweep.parse_grid(["max_steps=100,200,300", "lr=4e-7,5e-7"])
    assert grid == {"max_steps": ["100", "200", "300"], "lr": ["4e-7", "5e-7"]}
    points = sweep.expand_grid(grid)
    assert len(points) == 6
    # The first key varies slowest.
    assert points[:3] == [
        {"max_steps": "100", "lr": "4e-7"},
        {"max_steps": "100", "lr": "5e-7"},
        {"max_steps": "200", "lr": "4e-7"},
    ]
    for bad in (["max_steps"], ["max_steps=100,,300"], ["=1"], ["lr=1,1"]):
        with pytest.raises(RsiHubError):
            sweep.parse_grid(bad)
    with pytest.raises(RsiHubError, match="twice"):
        sweep.parse_grid(["lr=1e-7", "learning_rate=2e-7"])


def test_arm_names() -> None:
    assert sweep.arm_name("LA2b200s", {"max_steps": "100"}) == "LA2b200s_max_steps100"
    assert sweep.arm_name("x", {"lr": "4e-7", "mix": "a:1,b:2"}) == "x_lr4e-7_mixa-1-b-2"
    assert sweep.arm_name("x", {"max_steps": "300"}, "LENARM{max_steps}") == "LENARM300"
    with pytest.raises(RsiHubError, match="not a grid key"):
        sweep.arm_name("x", {"max_steps": "300"}, "{steps}")


def test_plan_resolves_every_arm() -> None:
    grid = {"max_steps": ["100", "200", "300"]}
    arms = sweep.plan_sweep(
        "LA2b200s",
        grid,
        fixed={"seed": "981"},
        name_template="LENARM{max_steps}",
        suites=["if818", "if263"],
        eval_args=["--backend", "vllm"],
        resolve=fake_resolve,
    )
    assert [a.name for a in arms] == ["LENARM100", "LENARM200", "LENARM300"]
    assert arms[0].train_argv() == [
        "train", "sft", "--recipe", "LA2b200s", "seed=981", "max_steps=100", "name=LENARM100",
    ]  # fmt: skip
    assert arms[2].eval_argv() == [
        "eval", "runs/LENARM300", "--suite", "if818,if263", "--backend", "vllm",
    ]  # fmt: skip
    assert arms[2].eval_argv(["if263"])[3] == "if263"
    assert arms[1].template_args() == [
        "sft",
        "LA2b200s",
        "seed=981",
        "max_steps=200",
        "name=LENARM200",
    ]
    with pytest.raises(RsiHubError, match="share the name"):
        sweep.plan_sweep("r", grid, name_template="same", resolve=fake_resolve)
    with pytest.raises(RsiHubError, match="both swept"):
        sweep.plan_sweep("r", grid, fixed={"steps": "5"}, resolve=fake_resolve)
    with pytest.raises(RsiHubError, match="bogus"):
        sweep.plan_sweep("r", grid, fixed={"bogus": "1"}, resolve=fake_resolve)


def _arms(suites: tuple[str, ...] = ("if818",)) -> list[sweep.Arm]:
    return sweep.plan_sweep(
        "LA2b200s",
        {"max_steps": ["100", "200"]},
        name_template="LENARM{max_steps}",
        suites=suites,
        resolve=fake_resolve,
    )


FAKE_TEMPLATE = """#!/bin/bash
# a stand-in for launch/slurm_train.sbatch
#SBATCH --job-name=rsi-hub-train
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=32
#SBATCH --time=24:00:00
#SBATCH --output=logs/%x-%j.out
set -euo pipefail
TRAINER=${1:?usage}
"""


def test_sbatch_scripts(tmp_path: Path) -> None:
    opts = sweep.SlurmOptions(
        partition="gpu", account="rsi", extra=("--qos=high",), python="/venv/bin/python",
        workdir="/work/rsi-hub",
    )  # fmt: skip
    scripts = sweep.write_scripts(_arms(), tmp_path, opts, template=FAKE_TEMPLATE)
    assert sorted(scripts) == ["LENARM100", "LENARM200"]
    assert sorted(scripts["LENARM100"]) == ["eval", "train"]
    train = scripts["LENARM100"]["train"].read_text()
    assert train == (
        "#!/bin/bash\n"
        "# a stand-in for launch/slurm_train.sbatch\n"
        "#SBATCH --job-name=LENARM100-train\n"
        "#SBATCH --gpus-per-node=4\n"
        "#SBATCH --cpus-per-task=32\n"
        "#SBATCH --time=04:00:00\n"
        f"#SBATCH --output={tmp_path}/logs/%x-%j.out\n"
        "#SBATCH --chdir=/work/rsi-hub\n"
        "#SBATCH --partition=gpu\n"
        "#SBATCH --account=rsi\n"
        "#SBATCH --qos=high\n"
        "set -euo pipefail\n"
        "# rsi-hub sweep arm LENARM100: the template's arguments, as if given to sbatch.\n"
        "set -- sft LA2b200s max_steps=100 name=LENARM100\n"
        "export GPUS_PER_NODE=4\n"
        "TRAINER=${1:?usage}\n"
    )
    evaluation = scripts["LENARM200"]["eval"].read_text()
    assert evaluation == (
        "#!/bin/bash\n"
        "#SBATCH --job-name=LENARM200-eval\n"
        f"#SBATCH --output={tmp_path}/logs/%x-%j.out\n"
        "#SBATCH --nodes=1\n"
        "#SBATCH --ntasks=1\n"
        "#SBATCH --time=02:00:00\n"
        "#SBATCH --gres=gpu:1\n"
        "#SBATCH --cpus-per-task=8\n"
        "#SBATCH --partition=gpu\n"
        "#SBATCH --account=rsi\n"
        "#SBATCH --qos=high\n"
        "# Written by `rsi-hub sweep`; see sweep.json beside it.\n"
        "set -euo pipefail\n"
        "cd /work/rsi-hub\n"
        "/venv/bin/python -m rsi_hub eval runs/LENARM200 --suite if818\n"
    )
    with pytest.raises(RsiHubError, match="has no `#SBATCH --job-name=` line"):
        sweep.write_scripts(_arms(), tmp_path, opts, template="#!/bin/bash\nset -euo pipefail\n")


def test_cpu_arms_train_through_the_template_without_gpus(tmp_path: Path) -> None:
    arms = sweep.plan_sweep(
        "smoke", {"max_steps": ["5"]},
        resolve=lambda r, o: ResolvedArm("sft", 0, Path("runs") / o["name"], {}),
    )  # fmt: skip
    scripts = sweep.write_scripts(
        arms, tmp_path, sweep.SlurmOptions(python="py", workdir="/w"), template=FAKE_TEMPLATE
    )["smoke_max_steps5"]
    assert scripts["train"].read_text() == (
        "#!/bin/bash\n"
        "# a stand-in for launch/slurm_train.sbatch\n"
        "#SBATCH --job-name=smoke_max_steps5-train\n"
        "#SBATCH --cpus-per-task=1\n"
        "#SBATCH --time=04:00:00\n"
        f"#SBATCH --output={tmp_path}/logs/%x-%j.out\n"
        "#SBATCH --chdir=/w\n"
        "set -euo pipefail\n"
        "# rsi-hub sweep arm smoke_max_steps5: the template's arguments, as if given to sbatch.\n"
        "set -- sft smoke max_steps=5 name=smoke_max_steps5\n"
        "export GPUS_PER_NODE=0\n"
        "TRAINER=${1:?usage}\n"
    )
    # Its evaluation runs on CPU too.
    assert "gpu" not in scripts["eval"].read_text()


def test_the_real_template_is_filled_in(tmp_path: Path) -> None:
    scripts = sweep.write_scripts(_arms(), tmp_path, sweep.SlurmOptions())
    text = scripts["LENARM200"]["train"].read_text()
    assert "#SBATCH --job-name=LENARM200-train" in text
    assert "set -- sft LA2b200s max_steps=200 name=LENARM200" in text
    assert "rsi-hub train finalize" in text  # the template queues it itself
    # The arguments are set before the template reads them.
    assert text.index("set -- sft") < text.index("TRAINER=${1")


def _fake_sbatch(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "sbatch.log"
    script = tmp_path / "sbatch"
    script.write_text(
        f'#!/bin/sh\necho "$@" >> {log}\nn=$(wc -l < {log})\necho "$((1000 + n));cluster"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, log


def test_submit_queues_eval_after_train(tmp_path: Path) -> None:
    arms = _arms()
    scripts = sweep.write_scripts(arms, tmp_path, sweep.SlurmOptions(), template=FAKE_TEMPLATE)
    sbatch, log = _fake_sbatch(tmp_path)
    lines: list[str] = []
    assert sweep.submit(arms, scripts, sbatch=str(sbatch), echo=lines.append)
    calls = log.read_text().splitlines()
    assert calls == [
        f"--parsable {tmp_path}/LENARM100.train.sbatch",
        f"--parsable --kill-on-invalid-dep=yes --dependency=afterok:1001 "
        f"{tmp_path}/LENARM100.eval.sbatch",
        f"--parsable {tmp_path}/LENARM200.train.sbatch",
        f"--parsable --kill-on-invalid-dep=yes --dependency=afterok:1003 "
        f"{tmp_path}/LENARM200.eval.sbatch",
    ]
    assert arms[1].jobs == {"train": "1003", "eval": "1004"}
    manifest = sweep.write_manifest(
        tmp_path, "LA2b200s", {"max_steps": ["100", "200"]}, arms, "slurm"
    )
    data = sweep.read_manifest(manifest.parent)
    assert data.arms[0].extra["jobs"]["eval"] == "1002"
    assert data.arms[1].point == {"max_steps": "200"}
    assert data.points == {arm.name: arm.point for arm in arms}


def test_without_sbatch_it_prints_what_it_would_submit(tmp_path: Path) -> None:
    arms = _arms()
    scripts = sweep.write_scripts(arms, tmp_path, sweep.SlurmOptions(), template=FAKE_TEMPLATE)
    lines: list[str] = []
    old_path = os.environ.get("PATH", "")
    os.environ["PATH"] = str(tmp_path / "empty")
    try:
        assert not sweep.submit(arms, scripts, echo=lines.append)
    finally:
        os.environ["PATH"] = old_path
    assert len(lines) == 4
    assert (
        lines[0]
        == f"would submit: sbatch --parsable {tmp_path}/LENARM100.train.sbatch  -> TRAIN_JOB"
    )
    assert "--dependency=afterok:TRAIN_JOB" in lines[1]
    assert not arms[0].jobs


def test_local_runs_arms_in_order_and_skips_done_steps() -> None:
    calls: list[list[str]] = []
    done = {("LENARM100", "train"), ("LENARM100", "if818")}
    sweep.run_local(
        _arms(("if818", "if263")),
        runner=lambda argv: calls.append(argv) or 0,
        echo=lambda _line: None,
        done=lambda arm, step: (arm.name, step) in done,
    )
    # Only what is missing runs; the suites of an arm are evaluated in one call.
    assert calls == [
        ["eval", "runs/LENARM100", "--suite", "if263"],
        ["train", "sft", "--recipe", "LA2b200s", "max_steps=200", "name=LENARM200"],
        ["eval", "runs/LENARM200", "--suite", "if818,if263"],
    ]
    with pytest.raises(RsiHubError, match="exited 3"):
        sweep.run_local(
            _arms(), runner=lambda argv: 3, echo=lambda _l: None, done=lambda a, s: False
        )


def test_real_recipes_resolve(tmp_path: Path) -> None:
    arms = sweep.plan_sweep("LA2b200s", {"max_steps": ["100", "200", "300"]})
    assert [a.run_dir for a in arms] == [
        "runs/LA2b200s_max_steps100",
        "runs/LA2b200s_max_steps200",
        "runs/LA2b200s_max_steps300",
    ]
    assert all(a.trainer == "sft" and a.num_gpus == 4 for a in arms)
    with pytest.raises(RsiHubError, match="lerning_rate"):
        sweep.plan_sweep("LA2b200s", {"lerning_rate": ["1e-7"]})


def test_cli_dry_run(capsys: pytest.CaptureFixture[str]) -> None:
    from rsi_hub.cli import main

    assert main(["sweep", "--recipe", "LA2b200s", "--grid", "steps=100,300", "--dry-run",
                 "--name", "LENARM{steps}"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "rsi-hub train sft --recipe LA2b200s max_steps=300 name=LENARM300" in out
