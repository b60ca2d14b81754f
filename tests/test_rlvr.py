"""RLVR: the checker reward, the recipes, and a GRPO smoke run on the tiny checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub.errors import RsiHubError
from rsi_hub.train import RlvrRecipe, available_recipes, load_recipe
from rsi_hub.train.reward import CheckerReward
from rsi_hub.train.rlvr import rlvr_rows
from tests.synth_standins import PROMPTS


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
    assert {"rlvr", "rlvr-smoke"} <= set(available_recipes())
    big = load_recipe("rlvr", trainer="rlvr")
    assert isinstance(big, RlvrRecipe)
    assert (big.use_vllm, big.bf16, big.name) == (True, True, "rlvr")
    smoke = load_recipe("rlvr-smoke", ["limit=3", "learning_rate=2e-5", "reward_fraction_weight=0"])
    assert (smoke.model, smoke.limit, smoke.learning_rate) == ("tiny", 3, 2e-5)
    assert smoke.reward_fraction_weight == 0.0
    with pytest.raises(RsiHubError, match="unknown recipe key 'lr'"):
        load_recipe("rlvr-smoke", ["lr=1"])
    with pytest.raises(RsiHubError, match="not a valid int"):
        load_recipe("rlvr-smoke", ["max_steps=many"])
    with pytest.raises(RsiHubError, match="no recipe 'nope'"):
        load_recipe("nope")
    with pytest.raises(RsiHubError, match="is a rlvr recipe"):
        load_recipe("rlvr-smoke", trainer="sft")


def test_both_recipes_make_a_valid_grpo_config() -> None:
    from trl import GRPOConfig

    from rsi_hub.train.run import trl_config

    # As `--dry-run` checks it: a CPU machine builds the bf16 recipe's config with use_cpu.
    big = trl_config(load_recipe("rlvr"), use_cpu=True)
    assert isinstance(big, GRPOConfig)
    assert (big.use_vllm, big.vllm_mode, big.vllm_tensor_parallel_size) == (True, "colocate", 4)
    assert big.generation_batch_size % big.num_generations == 0
    smoke = trl_config(load_recipe("rlvr-smoke"))
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
    assert evidence["run"] == evidence["recipe"]["name"] == "rlvr-smoke"
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
    assert "no recipe 'nope'" in capsys.readouterr().err


def test_rlvr_is_a_method_of_the_train_command() -> None:
    """`rlvr` is registered by `rsi_hub.cli.train` next to sft and simpo."""
    from rsi_hub.cli import build_parser
    from rsi_hub.cli.train import run_trainer

    parser = build_parser()
    train = parser._subparsers._group_actions[0].choices["train"]
    actions = next(a for a in train._actions if a.dest == "action")
    assert {"sft", "simpo", "rlvr"} <= set(actions.choices)
    args = parser.parse_args(["train", "rlvr", "--recipe", "rlvr-smoke", "max_steps=1"])
    assert (args.func, args.trainer, args.recipe, args.overrides) == (
        run_trainer,
        "rlvr",
        "rlvr-smoke",
        ["max_steps=1"],
    )


def test_rlvr_dry_run_and_relaunch(tmp_path: Path, capsys) -> None:
    """The RLVR recipes use the SFT launch path: dry run, accelerate relaunch for 4 GPUs."""
    import yaml

    from rsi_hub.cli import main
    from rsi_hub.train.launch import accelerate_command

    assert main(["train", "rlvr", "--recipe", "rlvr-smoke", "--dry-run"]) == 0
    plan = yaml.safe_load(capsys.readouterr().out)
    assert plan["recipe"]["trainer"] == "rlvr"
    assert plan["resolved"]["trainer"].endswith("(trl.GRPOTrainer)")
    assert plan["trl_config"]["num_generations"] == 2
    assert plan["trl_config"]["save_strategy"] == "no"
    big = load_recipe("rlvr")
    command = accelerate_command(big, ["train", "rlvr", "--recipe", "rlvr"])
    assert command[:2] == ["accelerate", "launch"] and "--num_processes" in command
    assert command[command.index("--num_processes") + 1] == "4"


@pytest.mark.slow
def test_killed_rlvr_run_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    """Relaunching an interrupted RLVR run continues from its last checkpoint, as SFT does."""
    from transformers import TrainerCallback

    from rsi_hub.rundir import TrainingEvidence
    from rsi_hub.train import train

    class Interrupt(Exception):
        pass

    class InterruptAfterSave(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            if state.global_step == 1:
                raise Interrupt("killed after checkpoint-1")

    overrides = {"output_dir": str(tmp_path / "run"), "save_steps": 1, "limit": 2}
    recipe = load_recipe("rlvr-smoke", overrides, trainer="rlvr")
    with pytest.raises(Interrupt):
        train(recipe, callbacks=[InterruptAfterSave()])
    assert TrainingEvidence.read(recipe.run_dir).status == "running"
    resumed = train(recipe)
    assert resumed.resumed_from == "checkpoint-1"
    evidence = resumed.evidence
    assert (evidence.status, evidence.optimizer_steps) == ("completed", 2)
    assert [a["resumed_from"] for a in evidence.attempts] == [None, "checkpoint-1"]
    assert evidence.data["n_prompts"] == 2
    again = train(recipe)
    assert again.skipped and again.evidence.optimizer_steps == 2
