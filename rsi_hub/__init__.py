"""rsi-hub: train, evaluate, release and serve RSIAgent-Delta on the Hugging Face stack."""

from rsi_hub.logs import quiet_kernel_fallbacks

__version__ = "0.1.0"

# Every entry point (CLI, Space, lm-eval task utils, library use) imports the package first.
quiet_kernel_fallbacks()
