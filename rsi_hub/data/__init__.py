"""Training data: the card's sources, mixes, the holdout guard and assistant-masked ChatML prep.

```python
from rsi_hub.data import PrepConfig, prepare, load_prepared
result = prepare(PrepConfig("tulu3:all,smoltalk:all", "runs/data/b1",
                            tokenizer="runs/s1/bundle-6000", sources={"tulu3": "/data/tulu3.jsonl"}))
result.sha256, result.stats["table"]
dataset = load_prepared(result.path)          # input_ids, assistant_masks, source
```

Uses `rsi_hub.chat` (rendering) and `rsi_hub.suites` (the holdout index); never `rsi_hub.train`.
"""

from rsi_hub.data.config import PrepConfig
from rsi_hub.data.convert import PreferenceRow, to_messages, to_preference
from rsi_hub.data.holdout import HoldoutGuard, PromptMatcher, default_holdout_matcher
from rsi_hub.data.masking import (
    SYSTEM_POLICIES,
    SystemPolicy,
    TokenisedRow,
    apply_system_policy,
    conversation_segments,
    tokenise_conversation,
)
from rsi_hub.data.mix import MixItem, format_mix, parse_mix, parse_source_overrides
from rsi_hub.data.prep import (
    DATA_FILE,
    SHA256_DEFINITION,
    STATS_FILE,
    PrepResult,
    format_table,
    load_prepared,
    prep_fingerprint,
    prepare,
    read_stats,
    render_preference,
)
from rsi_hub.data.sources import SOURCES, Source, get_source, load_source, refuse_holdout_files

__all__ = [
    "DATA_FILE",
    "SHA256_DEFINITION",
    "SOURCES",
    "STATS_FILE",
    "SYSTEM_POLICIES",
    "HoldoutGuard",
    "MixItem",
    "PreferenceRow",
    "PrepConfig",
    "PrepResult",
    "PromptMatcher",
    "Source",
    "SystemPolicy",
    "TokenisedRow",
    "apply_system_policy",
    "conversation_segments",
    "default_holdout_matcher",
    "format_mix",
    "format_table",
    "get_source",
    "load_prepared",
    "load_source",
    "parse_mix",
    "parse_source_overrides",
    "prep_fingerprint",
    "prepare",
    "read_stats",
    "refuse_holdout_files",
    "render_preference",
    "to_messages",
    "to_preference",
    "tokenise_conversation",
]
