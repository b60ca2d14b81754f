"""Exception classes of rsi-hub. Each message says what is wrong, where, and what to do next."""

from __future__ import annotations


class RsiHubError(Exception):
    """Base class of every error rsi-hub raises on purpose; the CLI prints it and exits 2."""


class ServingContractError(RsiHubError):
    """A model folder breaks the serving contract (template, special ids, stop ids).

    The message names the file, the field and the fix.
    """


class OutputDirNotEmptyError(RsiHubError):
    """An output folder already holds files and `--force` was not given."""


class SuiteFileError(RsiHubError):
    """A suite file is missing, malformed, fails its manifest hash, or would be overwritten.

    The message names the file (and the line and field, for a bad row) and what to do.
    """


class PrefSourceError(RsiHubError):
    """Preference pairs could not be loaded from the requested source; the message says why."""
