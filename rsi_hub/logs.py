"""Log noise kept out of every command: transformers' kernel-fallback warnings.

A nemotron_h model without `mamba_ssm` / `causal_conv1d` logs one long warning per kernel (four
or more per process) when it first runs. Without CUDA those packages cannot be installed, so the
advice is noise: nothing is said. With CUDA, one short line says what to install.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

KERNEL_LOGGER = "transformers.integrations.hub_kernels"
FALLBACK_MARK = "is falling back to its reference PyTorch implementation"
FALLBACK_NOTE = (
    "Mamba layers run on PyTorch reference kernels (slower): pip install 'rsi-hub[gpu]' for the "
    "CUDA ones."
)


def _cuda_available() -> bool:
    import torch  # already imported: a kernel is running when this is asked

    return torch.cuda.is_available()


class KernelFallbackFilter(logging.Filter):
    """Drops transformers' kernel-fallback warnings; with CUDA, turns the first into FALLBACK_NOTE."""

    def __init__(self, cuda_available: Callable[[], bool] = _cuda_available) -> None:
        super().__init__()
        self._cuda_available = cuda_available
        self._said = False

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a fallback warning already summarised or one that cannot apply."""
        if FALLBACK_MARK not in record.getMessage():
            return True
        if self._said or not self._cuda_available():
            return False
        self._said = True
        record.msg, record.args = FALLBACK_NOTE, ()
        return True


def quiet_kernel_fallbacks() -> None:
    """Install KernelFallbackFilter on transformers' kernel logger, once per process.

    The logger is looked up by name, so this imports nothing (transformers included).
    """
    logger = logging.getLogger(KERNEL_LOGGER)
    if not any(isinstance(f, KernelFallbackFilter) for f in logger.filters):
        logger.addFilter(KernelFallbackFilter())
