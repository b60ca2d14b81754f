"""Serving through the engines people deploy: launchers for `transformers serve` and `vllm serve`.

`rsi-hub serve` builds the exact engine command that serves a run (or a Hub repository) in the
card's served configuration and runs it; nothing here is a server of its own.
"""

from rsi_hub.serving.launch import ENGINES, EngineCommand, engine_command, exec_engine

__all__ = ["ENGINES", "EngineCommand", "engine_command", "exec_engine"]
