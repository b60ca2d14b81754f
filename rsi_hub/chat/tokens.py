"""Special tokens of the nemotron_h tokenizer and their ids: the one place that knows them."""

from __future__ import annotations

UNK_TOKEN = "<unk>"
BOS_TOKEN = "<s>"
EOS_TOKEN = "</s>"
IM_START_TOKEN = "<|im_start|>"
IM_END_TOKEN = "<|im_end|>"
# The base tokenizer pads with <unk> (config pad_token_id 0); padding is always masked.
PAD_TOKEN = UNK_TOKEN

# Ids as in the base model's tokenizer. Ids 3..9 are reserved control tokens there; the tiny
# tokenizer fills them with placeholders so that every real id lands where it does in the 30B model.
SPECIAL_TOKEN_IDS: dict[str, int] = {
    UNK_TOKEN: 0,
    BOS_TOKEN: 1,
    EOS_TOKEN: 2,
    IM_START_TOKEN: 10,
    IM_END_TOKEN: 11,
}
RESERVED_TOKEN_IDS = range(3, 10)


def reserved_token(token_id: int) -> str:
    """The placeholder text of reserved id `token_id` (3..9) in the tiny tokenizer."""
    return f"<SPECIAL_{token_id}>"


# Generation stops on the end-of-turn token first, and on </s> (a base-model habit) as well.
STOP_TOKEN_IDS: list[int] = [SPECIAL_TOKEN_IDS[IM_END_TOKEN], SPECIAL_TOKEN_IDS[EOS_TOKEN]]
# The same stops as text: where an answer decoded without special tokens still ends.
STOP_TEXTS: tuple[str, ...] = (IM_END_TOKEN, EOS_TOKEN)

MAX_INPUT_TOKENS = 8192
MAX_NEW_TOKENS = 2048
