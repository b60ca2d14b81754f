"""The one record of library versions, written into every evidence, eval meta and provenance."""

from __future__ import annotations

import importlib.metadata
import platform

# Distribution names as pip spells them (lower case, hyphens): the one key spelling.
LIBRARIES = (
    "rsi-hub", "torch", "transformers", "trl", "accelerate", "datasets", "tokenizers",
    "safetensors", "huggingface-hub", "lm-eval", "vllm", "mamba-ssm", "causal-conv1d",
    "flash-attn",
)  # fmt: skip


def library_versions() -> dict[str, str | None]:
    """Python, the installed version of each of `LIBRARIES` (None when absent), and CUDA.

    Keys are pip's distribution names (`rsi-hub`, `lm-eval`, `huggingface-hub`), so every
    record spells a library the same way; `cuda` is torch's CUDA build (None on CPU builds).
    """
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    try:
        import torch

        versions["cuda"] = torch.version.cuda
    except ImportError:  # pragma: no cover - torch is a dependency
        versions["cuda"] = None
    return versions
