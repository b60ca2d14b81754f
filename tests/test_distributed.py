"""Launch facts without launching: the launcher's command line, CPU process groups, the FSDP
guard. (tests/test_fsdp_cpu.py and tests/test_eval_parallel.py launch real processes.)"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest
import torch

from rsi_hub import distributed
from rsi_hub.distributed import (
    accelerate_command,
    launcher_record,
    parse_launch_command,
    use_cpu_processes_without_gpu,
)
from rsi_hub.errors import DistributedSetupError


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/usr/bin/python3", "/venv/bin/accelerate", "launch", "--config_file", "c.yaml", "-m",
          "rsi_hub", "train"], ("accelerate launch", "c.yaml")),
        (["python", "-m", "accelerate.commands.launch", "--config_file=/abs/c.yaml", "x.py"],
         ("accelerate launch", "/abs/c.yaml")),
        (["accelerate", "launch", "--num_processes", "2", "x.py"], ("accelerate launch", None)),
        (["/venv/bin/torchrun", "--nproc-per-node", "2", "x.py"], ("torchrun", None)),
        (["python", "-m", "torch.distributed.run", "x.py"], ("torchrun", None)),
        (["/bin/bash", "job.sh"], ("bash", None)),
    ],
)  # fmt: skip
def test_the_launcher_and_its_config_file_are_read_from_its_command_line(argv, expected) -> None:
    assert parse_launch_command(argv) == expected


def _launched(monkeypatch: pytest.MonkeyPatch, world: int) -> None:
    for name in ("ACCELERATE_USE_CPU", "ACCELERATE_LAUNCH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", str(world))


def test_several_processes_without_cuda_become_cpu_processes(monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    _launched(monkeypatch, 2)
    assert use_cpu_processes_without_gpu() is True
    assert os.environ["ACCELERATE_USE_CPU"] == "true"  # what accelerate and transformers read


def test_a_gpu_machine_and_a_single_process_are_left_alone(monkeypatch) -> None:
    _launched(monkeypatch, 2)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert use_cpu_processes_without_gpu() is False and "ACCELERATE_USE_CPU" not in os.environ
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    _launched(monkeypatch, 1)
    assert use_cpu_processes_without_gpu() is False and "ACCELERATE_USE_CPU" not in os.environ
    monkeypatch.delenv("LOCAL_RANK")
    monkeypatch.delenv("WORLD_SIZE")
    assert use_cpu_processes_without_gpu() is False and "ACCELERATE_USE_CPU" not in os.environ


def test_the_launcher_record_names_and_hashes_the_config_file(monkeypatch, tmp_path: Path) -> None:
    config = tmp_path / "cfg.yaml"
    config.write_text("distributed_type: FSDP\n")
    _launched(monkeypatch, 2)
    monkeypatch.setattr(distributed, "_cmdline", lambda pid: ["accelerate", "launch",
                        "--config_file", "cfg.yaml", "-m", "rsi_hub"])  # fmt: skip
    monkeypatch.setattr(distributed, "_cwd", lambda pid: tmp_path)  # the launcher's folder
    record = launcher_record()
    assert record.launcher == "accelerate launch" and record.world_size == 2
    assert record.config_file == str(config)
    assert record.config_sha256 == hashlib.sha256(config.read_bytes()).hexdigest()
    assert record.command == "accelerate launch --config_file cfg.yaml -m rsi_hub"
    monkeypatch.delenv("LOCAL_RANK")
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert launcher_record().to_json()["launcher"] == "python"


def test_the_data_parallel_command_uses_torchrun_with_a_free_port() -> None:
    assert accelerate_command(2, "rsi_hub.evaluate.parallel", ["cfg.json"]) == [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_machines", "1", "--mixed_precision", "no",
        "--dynamo_backend", "no", "--num_processes", "2", "--main_process_port", "0",
        "-m", "rsi_hub.evaluate.parallel", "cfg.json",
    ]  # fmt: skip


def test_fsdp_asked_for_and_an_unsharded_model_refuse_to_train(monkeypatch) -> None:
    from rsi_hub.train.fsdp import FullyShardedCheck, sharding_facts

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    assert sharding_facts(model) == {
        "wrapper": "none", "fsdp_modules": 0, "parameters": 4, "dtensor_parameters": 0,
        "local_fraction": 1.0,
    }  # fmt: skip
    check = FullyShardedCheck()
    monkeypatch.delenv("ACCELERATE_USE_FSDP", raising=False)
    check.on_train_begin(None, None, None, model=model)  # no FSDP asked for: fine
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    with pytest.raises(DistributedSetupError, match="asks for FSDP but the model is"):
        check.on_train_begin(None, None, None, model=model)
