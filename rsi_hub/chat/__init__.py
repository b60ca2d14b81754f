"""The serving contract (card section 1): special tokens, the chat template, k0, stop ids.

This package is the only place that knows the special tokens and their ids, loads the template
files from `templates/`, renders conversations and writes or validates the serving files of a
model folder. It imports nothing else of rsi_hub but the error classes and `rsi_hub.hashing`
(a leaf: which files are the weights).
"""

from rsi_hub.chat.serving import validate_model_folder, write_serving_files
from rsi_hub.chat.template import (
    SYSTEM_PROMPT_ID,
    load_chat_template,
    load_serving_config,
    load_system_prompt,
    render,
    served_messages,
    templates_dir,
)
from rsi_hub.chat.tokens import (
    BOS_TOKEN,
    EOS_TOKEN,
    IM_END_TOKEN,
    IM_START_TOKEN,
    MAX_INPUT_TOKENS,
    MAX_NEW_TOKENS,
    PAD_TOKEN,
    SPECIAL_TOKEN_IDS,
    STOP_TEXTS,
    STOP_TOKEN_IDS,
    UNK_TOKEN,
)

__all__ = [
    "BOS_TOKEN",
    "EOS_TOKEN",
    "IM_END_TOKEN",
    "IM_START_TOKEN",
    "MAX_INPUT_TOKENS",
    "MAX_NEW_TOKENS",
    "PAD_TOKEN",
    "SPECIAL_TOKEN_IDS",
    "STOP_TEXTS",
    "STOP_TOKEN_IDS",
    "SYSTEM_PROMPT_ID",
    "UNK_TOKEN",
    "load_chat_template",
    "load_serving_config",
    "load_system_prompt",
    "render",
    "served_messages",
    "templates_dir",
    "validate_model_folder",
    "write_serving_files",
]
