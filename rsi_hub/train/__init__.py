"""Training: recipes (card sections 2-3, 6) on TRL's SFTTrainer, CPOTrainer (SimPO) and
GRPOTrainer (RLVR, the checker as reward).

```python
from rsi_hub.train import load_recipe, train
recipe = load_recipe("smoke", ["max_steps=20"], trainer="sft")
result = train(recipe)            # runs/smoke: weights, tokenizer, serving files, evidence
result.losses(), result.evidence.dataset_sha256
```

Uses `rsi_hub.data` and `rsi_hub.chat`; RLVR also the checker and the generation pool (through
`rsi_hub.suites.prompts`, the selection synth uses too). Heavy imports (torch, TRL) happen when training runs.
"""

from rsi_hub.train.evidence import finalize_slurm_state
from rsi_hub.train.precision import BF16MomentAdamW, decay_parameter_names, no_decay_parameter_names
from rsi_hub.train.recipes import (
    RlvrRecipe,
    SFTRecipe,
    SimPORecipe,
    TrainRecipe,
    available_recipes,
    load_recipe,
    recipe_yaml,
)
from rsi_hub.train.run import PreparedRun, TrainResult, build_trainer, train, trl_arguments

__all__ = [
    "BF16MomentAdamW",
    "PreparedRun",
    "RlvrRecipe",
    "SFTRecipe",
    "SimPORecipe",
    "TrainRecipe",
    "TrainResult",
    "available_recipes",
    "build_trainer",
    "decay_parameter_names",
    "finalize_slurm_state",
    "load_recipe",
    "no_decay_parameter_names",
    "recipe_yaml",
    "train",
    "trl_arguments",
]
