"""RLVR: the checker reward, the recipes, and a GRPO smoke run on the tiny checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub.errors import RsiHubError
from rsi_hub.synth.rlvr import CheckerReward, load_recipe, recipe_names, rlvr_rows
from tests.synth_standins import PROMPTS

pytest.importorskip("rsi_hub.checker")


def _checks(prompt_index: int) -> str:
    return rlvr_rows(PROMPTS)[prompt_index]["checks_json"]


def test_reward_is_pass_plus_weighted_fraction() -> None:
    reward = CheckerReward(pass_weight=1.0, fraction_weight=0.5)
    p2 = _checks(1)  # no_char z + word_min 2
    completions = [
        [{"role": "assistant", "content": "Calm grey water"}],  # passes both
        [{"role": "assistant", "content": "Calm hazy water"}],  # fails no_char only
        [{"role": "assistant", "content": "Zz"}],  # fails both
        [{"role": "assistant", "content": ""}],  # empty: 0, though it has no z
    ]
    scores = reward(prompts=[None] * 4, completions=completions, checks_json=[p2] * 4)
    assert scores == [1.5, 0.25, 0.0, 0.0]
    weighted = CheckerReward(pass_weight=2.0, fraction_weight=0.0)
    assert weighted(prompts=[None], completions=["Calm grey water"], checks_json=[p2]) == [2.0]
    assert reward.__name__ == "checker"


def test_rows_are_served_prompts() -> None:
    row = rlvr_rows(PROMPTS)[0]
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    assert json.loads(row["checks_json"]) == [{"type": "word_eq", "n": 3}]
    assert row["prompt_id"] == "p1"


def test_recipes_and_overrides() -> None:
    assert {"rlvr", "rlvr-smoke"} <= set(recipe_names())
    big = load_recipe("rlvr")
    assert (big.use_vllm, big.bf16, big.recipe) == (True, True, "rlvr")
    smoke = load_recipe("rlvr-smoke", ["limit=3", "learning_rate=2e-5", "reward_fraction_weight=0"])
    assert (smoke.model, smoke.limit, smoke.learning_rate) == ("tiny", 3, 2e-5)
    assert smoke.reward_fraction_weight == 0.0
    with pytest.raises(RsiHubError, match="unknown RLVR setting"):
        load_recipe("rlvr-smoke", ["lr=1"])
    with pytest.raises(RsiHubError, match="expected"):
        load_recipe("rlvr-smoke", ["max_steps=many"])
    with pytest.raises(RsiHubError, match="unknown RLVR recipe"):
        load_recipe("nope")


def test_both_recipes_make_a_valid_grpo_config(tmp_path: Path) -> None:
    from rsi_hub.synth.rlvr.trainer import grpo_args

    big = grpo_args(load_recipe("rlvr"), tmp_path)
    assert (big.use_vllm, big.vllm_mode, big.vllm_tensor_parallel_size) == (True, "colocate", 4)
    assert big.generation_batch_size % big.num_generations == 0
    smoke = grpo_args(load_recipe("rlvr-smoke"), tmp_path)
    assert (smoke.use_vllm, smoke.num_generations, smoke.max_steps) == (False, 2, 2)
    assert smoke.chat_template_kwargs == {"enable_thinking": False}


@pytest.mark.slow
def test_grpo_smoke_run_logs_rewards(tmp_path: Path, capsys) -> None:
    """`rsi-hub train rlvr --recipe rlvr-smoke`: the shipped recipe on the real pool, via the CLI."""
    from rsi_hub.chat import validate_model_folder
    from rsi_hub.cli import main

    run = tmp_path / "run"
    assert main(["train", "rlvr", "--recipe", "rlvr-smoke", f"output_dir={run}"]) == 0
    assert str(run) in capsys.readouterr().out
    evidence = json.loads((run / "training_evidence.json").read_text())
    assert evidence["method"] == "rlvr"
    assert evidence["recipe"] == "rlvr-smoke"
    assert evidence["optimizer_steps"] == 2
    assert evidence["data"]["n_prompts"] == 4
    rows = [json.loads(x) for x in (run / "rlvr_prompts.jsonl").read_text().splitlines()]
    assert all(int(r["prompt_id"]) % 70 != 33 for r in rows)  # pool ids, IF263's slice skipped
    assert len(evidence["rewards"]) == 2
    for entry in evidence["rewards"]:
        assert "rewards/checker/mean" in entry
        assert 0.0 <= entry["reward"] <= 1.5
    # Both hashes are recorded (equal when every group's rewards tie: GRPO's advantage is 0).
    assert len(evidence["init_weights_sha256"]) == len(evidence["weights_sha256"]) == 64
    assert evidence["status"] == "completed"
    assert evidence["reward"]["checker_version"]
    validate_model_folder(run)  # the run directory keeps the serving contract


def test_train_rlvr_cli_is_registered(capsys) -> None:
    from rsi_hub.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["train", "rlvr", "--help"])
    assert exit_info.value.code == 0
    assert "--recipe" in capsys.readouterr().out
    assert main(["train", "rlvr", "--recipe", "nope"]) == 2
    assert "unknown RLVR recipe" in capsys.readouterr().err


def test_rlvr_joins_an_existing_train_command() -> None:
    """With the training branch's `train sft|simpo`, `rlvr` becomes one more method of it."""
    import argparse

    from rsi_hub.cli import rlvr

    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command")
    train = commands.add_parser("train")
    actions = train.add_subparsers(dest="action")
    actions.add_parser("sft")
    rlvr.register(commands)
    assert set(actions.choices) == {"sft", "rlvr"}
    args = parser.parse_args(["train", "rlvr", "--recipe", "rlvr-smoke", "max_steps=1"])
    assert (args.func, args.recipe, args.overrides) == (rlvr.run, "rlvr-smoke", ["max_steps=1"])
