"""Experiment tooling of card sections 3 and 4: weight soups, system-prompt search, sweeps,
run tables and plots.

Each module is small and imports only what it needs; everything that reads evaluation results or
runs an evaluation goes through `rsi_hub.experiments.evalio`, the one place that imports
`rsi_hub.evaluate`, and everything that names a training recipe goes through
`rsi_hub.experiments.recipes`, the one place that imports `rsi_hub.train`.
"""
