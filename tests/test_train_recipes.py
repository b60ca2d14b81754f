"""Recipes: the card's values, typed overrides, dry runs, launch files, the gpu-extra stop."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rsi_hub.cli import main
from rsi_hub.errors import MissingGpuExtraError, RecipeError
from rsi_hub.train import SFTRecipe, SimPORecipe, available_recipes, load_recipe
from rsi_hub.train.dryrun import describe
from rsi_hub.train.launch import missing_gpu_kernels, require_packing_support

ROOT = Path(__file__).resolve().parents[1]
BASE = "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-Base-BF16"


def test_shipped_recipes() -> None:
    assert {"b1", "LA2b200s", "simpoN", "smoke", "smoke_simpo"} <= set(available_recipes())
    for name in available_recipes():
        load_recipe(name).validate()


def test_b1_is_the_card_recipe() -> None:
    r = load_recipe("b1")
    assert isinstance(r, SFTRecipe)
    assert r.mix == "tulu3:all,smoltalk:all,magpie:all,numina:all"
    assert (r.max_steps, r.learning_rate, r.lr_scheduler_type, r.min_lr_rate) == (
        5600,
        3e-6,
        "cosine_with_min_lr",
        0.08,
    )
    assert (r.warmup_steps, r.weight_decay, r.max_grad_norm, r.seed) == (60, 0.1, 1.0, 11)
    assert r.packing and r.max_length == 8192 and r.num_gpus == 4
    assert r.optimizer_state_dtype == "bfloat16" and r.base_model == BASE


def test_la2b200s_is_the_card_recipe() -> None:
    r = load_recipe("LA2b200s")
    assert r.mix == "iflensyn:33000" and r.model == "runs/b1"
    assert (r.max_steps, r.learning_rate, r.warmup_steps, r.seed) == (200, 4e-7, 20, 981)
    assert (r.min_lr_rate, r.weight_decay, r.max_grad_norm) == (0.08, 0.1, 1.0)
    assert r.packing and r.max_length == 8192
    assert r.per_device_train_batch_size * r.max_length == 16384  # the card's micro-batch
    assert r.base_model_revision == "434456c9a6753f29d24e23c95d622aaf17111b3b"


def test_simpon_is_simpo_on_ultrafeedback() -> None:
    from rsi_hub.train import trl_arguments

    r = load_recipe("simpoN")
    assert isinstance(r, SimPORecipe)
    assert (r.mix, r.max_steps, r.learning_rate, r.cpo_alpha) == ("dpo_ufb:all", 400, 5e-7, 0.0)
    args = trl_arguments(r)
    assert args["loss_type"] == "simpo" and args["cpo_alpha"] == 0.0


def test_smoke_runs_the_tiny_model_on_the_shipped_demo_set() -> None:
    r = load_recipe("smoke")
    assert r.model == "tiny" and r.mix == "demo:all" and not r.packing and r.num_gpus == 0


def test_overrides_are_typed() -> None:
    r = load_recipe("LA2b200s", ["learning_rate=5e-7", "packing=false", "save_total_limit=none",
                                 "sources.iflensyn=/data/ifl.jsonl", "max_steps=300"])  # fmt: skip
    assert (r.learning_rate, r.packing, r.save_total_limit, r.max_steps) == (5e-7, False, None, 300)
    assert r.sources == {"iflensyn": "/data/ifl.jsonl"}
    assert load_recipe("smoke", {"max_steps": 3}).max_steps == 3


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "lerning_rate=1e-6",
            "unknown recipe key 'lerning_rate' \\(did you mean learning_rate\\?\\); valid keys: ",
        ),
        ("max_steps=1.5", "max_steps='1.5' is not a valid int"),
        ("packing=maybe", "is not a valid bool"),
        ("system=always", "system must be one of keep, k0, none"),
        ("mix=dpo_ufb:all", "needs sft sources"),
        ("mix=tulu3:zero", "mix: "),
        ("seed", "is not key=value"),
        ("learning_rate.x=1", "is not a mapping"),
    ],
)
def test_bad_overrides_name_the_key(override: str, message: str) -> None:
    with pytest.raises(RecipeError, match=message):
        load_recipe("LA2b200s", [override])


def test_unknown_key_lists_the_valid_ones() -> None:
    with pytest.raises(RecipeError) as info:
        load_recipe("smoke", ["nope=1"])
    assert "learning_rate" in str(info.value) and "packing" in str(info.value)


def test_recipe_for_the_other_trainer_is_refused() -> None:
    with pytest.raises(RecipeError, match="rsi-hub train simpo --recipe simpoN"):
        load_recipe("simpoN", trainer="sft")
    with pytest.raises(RecipeError, match="no recipe 'b2'"):
        load_recipe("b2")


def test_recipe_from_a_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("trainer: sft\nmix: demo:10\nlearning_rate: 3e-4\n")
    r = load_recipe(str(path))
    assert (r.name, r.learning_rate, r.run_dir) == ("mine", 3e-4, Path("runs/mine"))
    path.write_text("trainer: sft\nwarmup: 3\n")
    with pytest.raises(RecipeError, match="unknown recipe key 'warmup'"):
        load_recipe(str(path))


def test_dry_run_la2b200s_config_checks_the_4_gpu_launch() -> None:
    plan = describe(load_recipe("LA2b200s"))
    launch = plan["launch"]
    assert launch["distributed"] == {
        "distributed_type": "FSDP",
        "fsdp_version": 2,
        "mixed_precision": "bf16",
        "num_processes": 4,
        "wrap": "NemotronHBlock",
        "activation_checkpointing": True,
        "state_dict_type": "SHARDED_STATE_DICT",
    }
    assert "accelerate launch --config_file" in launch["command"]
    assert launch["command"].endswith("--num_processes 4 -m rsi_hub train sft --recipe LA2b200s")
    assert launch["slurm"] == "sbatch launch/slurm_train.sbatch sft LA2b200s"
    trl = plan["trl_config"]
    assert trl["lr_scheduler_type"] == "cosine_with_min_lr" and trl["lr_scheduler_kwargs"] == {
        "min_lr_rate": 0.08
    }
    # Packed by rsi-hub (TRL's bfd over large shards); TRL trains padding-free on the packed rows.
    assert (trl["packing"], trl["padding_free"], trl["max_length"]) == (False, True, None)
    assert plan["recipe"]["packing"] and "pack_for_training" in plan["resolved"]["packing"]
    assert trl["activation_checkpointing"] is False
    assert plan["resolved"]["hyperparameters"]["max_tokens_per_step"] == 65536


def test_dry_run_cli_prints_yaml_and_loads_no_model(capsys) -> None:
    assert (
        main(["train", "sft", "--recipe", "LA2b200s", "--dry-run", "sources.iflensyn=data/x.jsonl"])
        == 0
    )
    printed = yaml.safe_load(capsys.readouterr().out)
    assert printed["recipe"]["sources"] == {"iflensyn": "data/x.jsonl"}
    assert printed["launch"]["slurm"].endswith(
        "slurm_train.sbatch sft LA2b200s sources.iflensyn=data/x.jsonl"
    )
    assert main(["train", "simpo", "--recipe", "simpoN", "--dry-run"]) == 0
    assert "CPOTrainer" in capsys.readouterr().out
    assert main(["train", "sft", "--recipe", "simpoN", "--dry-run"]) == 2


@pytest.mark.skipif(not missing_gpu_kernels(), reason="the gpu extra is installed here")
def test_packed_training_without_the_gpu_extra_stops_with_a_message(capsys) -> None:
    with pytest.raises(MissingGpuExtraError, match="seq_idx") as info:
        require_packing_support(load_recipe("LA2b200s"))
    assert "packing=false" in str(info.value) and ".[train,gpu]" in str(info.value)
    assert main(["train", "sft", "--recipe", "LA2b200s"]) == 2
    assert "gpu` extra" in capsys.readouterr().err
    require_packing_support(load_recipe("LA2b200s", ["packing=false"]))  # unpacked is allowed


def test_launch_files_are_consistent() -> None:
    single = yaml.safe_load((ROOT / "launch/accelerate_fsdp2_4gpu.yaml").read_text())
    multi = yaml.safe_load((ROOT / "launch/accelerate_fsdp2_multinode.yaml").read_text())
    assert single["num_processes"] == 4 and single["fsdp_config"]["fsdp_version"] == 2
    assert multi["rdzv_backend"] == "c10d" and multi["fsdp_config"] == single["fsdp_config"]
    sbatch = (ROOT / "launch/slurm_train.sbatch").read_text()
    for needle in (
        "srun",
        "accelerate launch",
        "SLURM_NODEID",
        "MASTER_ADDR",
        "--requeue",
        "rsi-hub train finalize",
    ):
        assert needle in sbatch


def test_slurm_submission_of_a_cpu_recipe_asks_for_no_gpu(tmp_path: Path) -> None:
    from rsi_hub.train.launch import slurm_submit_args

    recipe = load_recipe("smoke", ["max_steps=2", "name=one"])
    args = slurm_submit_args(recipe, ["sft", "smoke", "max_steps=2", "name=one"], log_dir="L")
    # Options on sbatch's command line override the template's #SBATCH lines (4 GPUs, 32 CPUs).
    assert args == [
        "--job-name=one-train", "--output=L/%x-%j.out", "--export=ALL,GPUS_PER_NODE=0",
        "--gpus-per-node=0", "--cpus-per-task=1",
        str(ROOT / "launch" / "slurm_train.sbatch"), "sft", "smoke", "max_steps=2", "name=one",
    ]  # fmt: skip
