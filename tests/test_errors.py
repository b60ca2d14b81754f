"""Our error classes: each area's class is also the matching standard exception, with path/field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub import errors
from rsi_hub.cli import main
from rsi_hub.errors import (
    ConfigError,
    EvaluationError,
    EvaluationFileError,
    EvaluationInputError,
    ExperimentError,
    ExperimentFileError,
    ExperimentInputError,
    PromptError,
    RsiHubError,
    SlurmError,
    SynthError,
    SynthFileError,
    SynthInputError,
)

STANDARD = [
    (ConfigError, ValueError),
    (PromptError, ValueError),
    (EvaluationError, RuntimeError),
    (EvaluationInputError, ValueError),
    (EvaluationFileError, OSError),
    (SynthError, RuntimeError),
    (SynthInputError, ValueError),
    (SynthFileError, OSError),
    (ExperimentError, RuntimeError),
    (ExperimentInputError, ValueError),
    (ExperimentFileError, OSError),
]


@pytest.mark.parametrize(("cls", "standard"), STANDARD)
def test_each_class_is_caught_as_its_standard_type(cls: type, standard: type) -> None:
    with pytest.raises(standard) as caught:
        raise cls("what is wrong, where, and the fix", path=Path("f.json"), field="limit")
    err = caught.value
    assert isinstance(err, RsiHubError)  # what the CLI catches
    assert str(err) == "what is wrong, where, and the fix"
    assert (err.path, err.field) == (Path("f.json"), "limit")


def test_every_area_class_has_a_standard_base() -> None:
    standard = (ValueError, OSError, RuntimeError)
    area_classes = [
        c
        for name, c in vars(errors).items()
        if isinstance(c, type) and name.startswith(("Evaluation", "Synth", "Experiment"))
    ]
    assert len(area_classes) == 9
    assert all(issubclass(c, standard) for c in area_classes)


def test_path_and_field_default_to_none() -> None:
    err = RsiHubError("plain")
    assert (str(err), err.path, err.field) == ("plain", None, None)


# --- one representative raise site per area ---


def test_evaluate_unknown_suite_is_an_input_error_naming_the_field() -> None:
    from rsi_hub.evaluate.protocol import resolve_suites

    with pytest.raises(EvaluationInputError, match="unknown suite 'if999'") as err:
        resolve_suites("if818,if999")
    assert isinstance(err.value, ValueError) and err.value.field == "suite"


def test_evaluate_missing_results_folder_is_a_file_error(tmp_path: Path) -> None:
    from rsi_hub.evaluate.compare import load_paired_log
    from rsi_hub.evaluate.protocol import SUITES
    from rsi_hub.evaluate.store import META_FILE, RESULTS_FILE

    folder = tmp_path / "eval" / "if818"
    folder.mkdir(parents=True)
    (folder / RESULTS_FILE).write_text(json.dumps({"results": {}}))
    (folder / META_FILE).write_text(json.dumps({"suite": "if818"}))
    with pytest.raises(OSError, match="no per-document samples logged") as err:
        load_paired_log(tmp_path, SUITES["if818"])
    assert isinstance(err.value, EvaluationFileError) and err.value.path == folder


def test_the_cli_still_catches_area_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "RUN", "--suite", "if999"]) == 2
    assert "rsi-hub eval: error: unknown suite 'if999'" in capsys.readouterr().err


def test_synth_missing_model_folder_is_a_file_error(tmp_path: Path) -> None:
    from rsi_hub.synth import synthesize
    from rsi_hub.synth.config import SynthConfig

    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps({"id": "p1", "prompt": "Say hi.", "checks": []}) + "\n")
    model = tmp_path / "no-model"
    config = SynthConfig("rft", model, tmp_path / "out", prompts_file=prompts)
    with pytest.raises(OSError, match="not a model folder") as err:
        synthesize(config, eligible=lambda _prompt: True)
    assert isinstance(err.value, SynthFileError)
    assert (err.value.path, err.value.field) == (model, "model")
    assert not (tmp_path / "out").exists()


def test_synth_bad_k_is_an_input_error() -> None:
    from rsi_hub.synth.config import SynthConfig

    with pytest.raises(ValueError, match="--k must be at least 1") as err:
        SynthConfig("lensyn", "M", "O", k=0)
    assert isinstance(err.value, SynthInputError) and err.value.field == "k"


def test_experiment_errors_per_kind(tmp_path: Path) -> None:
    from rsi_hub.experiments.runs_table import discover_runs
    from rsi_hub.experiments.sweep import parse_grid
    from rsi_hub.slurm import parse_job_id

    with pytest.raises(ValueError, match="repeats a value") as bad_grid:
        parse_grid(["max_steps=100,100"])
    assert isinstance(bad_grid.value, ExperimentInputError) and bad_grid.value.field == "grid"
    with pytest.raises(OSError, match="is not a folder of runs") as missing:
        discover_runs(tmp_path / "runs")
    assert isinstance(missing.value, ExperimentFileError)
    assert missing.value.path == tmp_path / "runs"
    with pytest.raises(RuntimeError, match="not a job id") as failed:
        parse_job_id("sbatch: error: invalid partition")
    assert isinstance(failed.value, SlurmError)


def test_prompt_search_checks_limit_where_eval_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Refused before the candidates are read (the folder does not exist), with EvalConfig's words.
    argv = ["prompt-search", str(tmp_path), "--candidates", str(tmp_path / "none"), "--limit", "0"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "rsi-hub prompt-search: error: --limit must be at least 1, got 0.\n"
    )


def test_synth_store_refuses_other_settings_with_a_file_error(tmp_path: Path) -> None:
    from rsi_hub.synth.store import RunStore

    first = RunStore(tmp_path)
    first.open({"k": 1}, rejudge=dict)
    first.close()
    with pytest.raises(OSError, match="holds a run with other settings") as err:
        RunStore(tmp_path).open({"k": 2}, rejudge=dict)
    assert isinstance(err.value, SynthFileError) and err.value.path == tmp_path
