"""Telling "the Hub could not be reached" apart from other failures, in one line.

huggingface_hub raises its own `HfHubHTTPError` when the Hub answers with an error, but lets the
transport errors of its HTTP client (connection refused, DNS failure, timeout, reset) through as
they are. huggingface_hub 2.x uses `httpx2`, earlier versions `httpx`; both are recognised, by
the modules already imported (an exception can only come from a module that is loaded), so this
module imports neither and is a leaf like `rsi_hub.hashing`.
"""

from __future__ import annotations

import sys

CLIENT_MODULES = ("httpx2", "httpx")


def unreachable_errors() -> tuple[type[BaseException], ...]:
    """The exception classes that mean no answer came from the Hub (for an `except` clause)."""
    modules = [sys.modules[name] for name in CLIENT_MODULES if name in sys.modules]
    return tuple(m.TransportError for m in modules if hasattr(m, "TransportError"))


def one_line(text: str) -> str:
    """`text` with every run of white space (newlines included) made one space."""
    return " ".join(text.split())


def unreachable_reason(err: BaseException) -> str:
    """`cannot reach the Hub at ENDPOINT (ConnectError: ...)`: which Hub, and what failed."""
    from huggingface_hub import constants

    return (
        f"cannot reach the Hub at {constants.ENDPOINT} ({type(err).__name__}: {one_line(str(err))})"
    )


def failure_reason(err: BaseException) -> str:
    """One line for a failed Hub call: `unreachable_reason` or `TypeName: message`."""
    if isinstance(err, unreachable_errors()):
        return unreachable_reason(err)
    return f"{type(err).__name__}: {one_line(str(err))}"
