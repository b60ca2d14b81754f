"""RLVR (card section 6): TRL GRPOTrainer on pool prompts, rewarded by the one checker."""

from rsi_hub.synth.rlvr.config import RlvrConfig, load_recipe, recipe_names
from rsi_hub.synth.rlvr.reward import CheckerReward
from rsi_hub.synth.rlvr.trainer import rlvr_rows, train_rlvr

__all__ = ["CheckerReward", "RlvrConfig", "load_recipe", "recipe_names", "rlvr_rows", "train_rlvr"]
