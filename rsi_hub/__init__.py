"""rsi-hub: train, evaluate, release and serve RSIAgent-Delta on the Hugging Face stack."""

__version__ = "0.1.0"
