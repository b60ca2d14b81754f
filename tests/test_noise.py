"""What a CPU user sees: no kernel advice that cannot apply, no pin_memory warnings."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rsi_hub.logs import FALLBACK_NOTE, KERNEL_LOGGER, KernelFallbackFilter, quiet_kernel_fallbacks

ROOT = Path(__file__).resolve().parents[1]
FALLBACK = (
    "`{}` is falling back to its reference PyTorch implementation because `mamba_ssm` is not "
    "installed. This is correct but much slower; install `mamba_ssm` for the optimized kernel."
)
KERNELS = ("mamba_chunk_scan_combined", "causal_conv1d_fn", "causal_conv1d_update", "selective")


def test_model_load_and_generate_on_cpu_print_no_kernel_advice(tiny_run: Path) -> None:
    """A real process loads the tiny nemotron_h model and generates: its Mamba layers run the
    reference kernels, and transformers' four fallback warnings never reach the terminal."""
    code = (
        "import rsi_hub, torch; from transformers import AutoModelForCausalLM;"
        f"m = AutoModelForCausalLM.from_pretrained({str(tiny_run)!r});"
        "m.generate(torch.tensor([[1, 5, 6, 7]]), max_new_tokens=3, do_sample=False)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    assert "falling back" not in output
    assert "mamba_ssm" not in output and "rsi-hub[gpu]" not in output


def _emit(logger: logging.Logger) -> None:
    for name in KERNELS:
        logger.warning(FALLBACK.format(name))
    logger.warning("an unrelated warning")


@pytest.mark.parametrize(("cuda", "expected"), [(True, [FALLBACK_NOTE]), (False, [])])
def test_fallback_warnings_become_one_short_line_with_cuda(
    cuda: bool, expected: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    logger = logging.getLogger(f"tests.kernels.{cuda}")
    logger.addFilter(KernelFallbackFilter(cuda_available=lambda: cuda))
    with caplog.at_level(logging.WARNING, logger=logger.name):
        _emit(logger)
        _emit(logger)  # a second model load in the same process
    assert caplog.messages == [*expected, "an unrelated warning", "an unrelated warning"]


def test_the_filter_is_installed_once() -> None:
    quiet_kernel_fallbacks()
    quiet_kernel_fallbacks()
    filters = logging.getLogger(KERNEL_LOGGER).filters
    assert sum(isinstance(f, KernelFallbackFilter) for f in filters) == 1


def test_cpu_training_does_not_pin_memory(tiny_run: Path, tmp_path: Path) -> None:
    """Pinned memory needs an accelerator: torch warns once per DataLoader iterator without one."""
    import torch

    from rsi_hub.train import load_recipe
    from rsi_hub.train.run import trl_config

    recipe = load_recipe(
        "smoke", {"model": str(tiny_run), "output_dir": str(tmp_path / "run")}, trainer="sft"
    )
    assert trl_config(recipe).dataloader_pin_memory is torch.cuda.is_available()
    assert trl_config(recipe, dataloader_pin_memory=False).dataloader_pin_memory is False


def test_eval_model_sets_one_length_limit_per_request(tiny_run: Path) -> None:
    """The run's generation_config says max_new_tokens 2048 and lm-eval passes max_length:
    lm-eval's plain HF model makes transformers warn about the pair on every request (and lets
    2048 win over the task's max_gen_toks). rsi-hub's HF model clears the config's limit, so
    lm-eval's is the only one, and transformers stays quiet."""
    from lm_eval.api.instance import Instance

    from rsi_hub.evaluate.models import RsiHFLM

    settings = {"until": ["<|im_end|>"], "max_gen_toks": 4, "do_sample": False}
    requests = [
        Instance(
            "generate_until", {"id": i}, (f"<|im_start|>user\n{word}<|im_end|>\n", settings), i
        )
        for i, word in enumerate(("sea", "river"))
    ]
    model = RsiHFLM(pretrained=str(tiny_run), device="cpu", batch_size=1)
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    transformers_logger = logging.getLogger("transformers")  # it does not propagate to root
    transformers_logger.addHandler(handler)
    try:
        model.generate_until(requests)
        clean = list(seen)
        # What lm-eval's plain HF model keeps (there 2048; 4 here to stay fast): warned per request.
        model.model.generation_config.max_new_tokens = 4
        model.generate_until(requests)
    finally:
        transformers_logger.removeHandler(handler)
    assert [m for m in clean if "max_length" in m] == []
    assert sum("Both `max_new_tokens`" in m for m in seen) == len(requests)
