"""The rule-based checker: one implementation of every constraint, for evaluation, synthetic-data
filtering, the RL reward and the demo (normative spec: spec/checks.md).

```python
from rsi_hub.checker import check, CheckError

verdict = check(response, [{"type": "word_eq", "n": 50}, {"type": "no_char", "char": "z"}])
verdict.passed             # True only if every check passed
verdict.results[0].reason  # "" when passed, else e.g. "expected 50 words, got 48 (-2)"
```

- `check(response, checks)` validates every constraint first (`CheckError` names the index, what
  is wrong and how to fix it), then judges. Any `str` response never raises.
- `validate_checks(checks)` validates only (suite loaders).
- `REGISTRY` maps each type name to its function, parameter schema and summary; the functions'
  docstrings state the semantics, including the readings chosen where the spec is silent.
- `CHECKER_VERSION` names the semantics; it changes whenever some verdict could change.
- `sandbox_backend()` names the sandbox that runs `code_tests` here: "bwrap", "fallback" or
  "none" (refuses to run code); evaluation records it in meta.json.
- `failure_analysis` / `render_failure_table` (in `rsi_hub.checker.analysis`) build card §5's
  failure table from verdicts.

Readings chosen where the spec is silent (each stated again, with examples, in the docstring
of the function that implements it, and tested in tests/test_checker.py):

- Word match (`word_times`, `no_word`) runs on N(t) with full case folding, so curly and
  straight apostrophes, NFKC forms and any white space inside a phrase match; a boundary is a
  character that is not a letter, digit or underscore, or an end; occurrences are counted
  without overlap.
- `no_char` looks at the raw stripped text (not N(t)); for a letter both cases are forbidden
  unless `case_sensitive`.
- Empty `text` for `contains`/`startswith`/`endswith` passes (the empty string is a substring);
  a blank `word` is a `CheckError`.
- `sent` (1.1): the last sentence is ended when no letter or digit follows the last `.`, `!` or
  `?` (`**Three.**` and `Done. :)` are ended); an empty response passes n = 0.
- Bullets may be nested (they count); thematic breaks such as `* * *` are not bullets; a tab
  after the marker counts as the space. Numbered items (1.1) start their line after at most 3
  spaces (CommonMark); deeper-indented sub-items are not items; at most 9 digits.
- Table lines may be indented; a `|`-block whose second line is not a separator is skipped.
- JSON: strict (no NaN/Infinity); at most 2,000,000 characters and 256 levels of nesting;
  every fenced block counts towards "exactly one", which is parsed only if its info string is
  empty or `json` and it is closed.
- N(s) (1.1) runs NFKC on the Stream-Safe form of s (`stream_safe`: a U+034F after every 30
  combining marks in a row), so normalisation is linear on any input.
- EV4 readings (exact numbers of any size, option letters A-Z, RE2 patterns, tool-call shapes,
  the refusal phrase list, how code is extracted and run) are in `checks_ev4`, `checks_calls`,
  `re2_patterns`, `checks_code` and `sandbox`.

This package is a leaf: it imports nothing else from rsi_hub.
"""

from rsi_hub.checker import (  # noqa: F401 - importing registers the check types
    checks_calls,
    checks_code,
    checks_counts,
    checks_ev4,
    checks_structure,
    checks_text,
)
from rsi_hub.checker.analysis import FailureAnalysis, failure_analysis, render_failure_table
from rsi_hub.checker.context import normalize
from rsi_hub.checker.core import (
    CHECKER_VERSION,
    REGISTRY,
    CheckError,
    CheckResult,
    Verdict,
    check,
    validate_checks,
)
from rsi_hub.checker.sandbox import sandbox_backend

#: The instruction-following check types of the spec's table (IF-818, IF263, IF-3k, the pool).
IF_TYPES: tuple[str, ...] = (
    "word_eq",
    "word_min",
    "word_max",
    "word_band",
    "word_times",
    "sent",
    "sent_min",
    "sent_max",
    "para",
    "contains",
    "contains_norm",
    "no_word",
    "no_char",
    "startswith",
    "endswith",
    "bullet",
    "numbered",
    "numbered_start",
    "table_rows",
    "json_keys",
    "json_keys_any",
    "json_array_len",
    "is_upper",
    "is_lower",
    "char_max",
)

#: The EV4 (general ability) check types.
EV4_TYPES: tuple[str, ...] = (
    "number_eq",
    "choice",
    "regex",
    "contains_any",
    "json_valid",
    "tool_call",
    "refusal",
    "no_refusal",
    "code_tests",
)

__all__ = [
    "CHECKER_VERSION",
    "EV4_TYPES",
    "IF_TYPES",
    "REGISTRY",
    "CheckError",
    "CheckResult",
    "FailureAnalysis",
    "Verdict",
    "check",
    "failure_analysis",
    "normalize",
    "render_failure_table",
    "sandbox_backend",
    "validate_checks",
]
