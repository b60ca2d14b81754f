"""The one place `rsi_hub.experiments` touches `rsi_hub.evaluate`.

Experiments never re-implement evaluation, the weights hash or the paired tests: they call the
evaluate package's own functions through the thin wrappers below, so that a change of format or
statistic there reaches every table here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from rsi_hub.errors import RsiHubError


class EvaluateUnavailableError(RsiHubError):
    """`rsi_hub.evaluate` is not installed in this checkout (it comes with the evalh branch)."""


def _evaluate() -> Any:
    try:
        import rsi_hub.evaluate as evaluate
    except ImportError as err:
        raise EvaluateUnavailableError(
            "this command needs rsi_hub.evaluate (rsi-hub eval / compare), which this checkout "
            f"does not have: {err}"
        ) from err
    return evaluate


def weights_sha256(folder: str | Path) -> str:
    """The sha256 that binds evaluation results to a set of weights (evaluate's definition)."""
    try:
        return _evaluate().weights_sha256(folder)
    except EvaluateUnavailableError:
        # TEMPORARY until the evalh branch is merged: sha256 over the safetensors files in name
        # order. Deleted at merge so that there is one definition of the weights hash.
        digest = hashlib.sha256()
        for path in sorted(Path(folder).glob("*.safetensors")):
            with path.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
        return digest.hexdigest()
