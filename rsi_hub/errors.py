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


class ReleaseError(RsiHubError):
    """A release cannot be staged, validated or pushed; the message names the file and the fix.

    Nothing is pushed when this is raised before the push step.
    """


# --- data preparation and training (rsi_hub.data, rsi_hub.train) ---


class DataSourceError(RsiHubError):
    """A data source cannot be read: unknown name, missing local file, unrecognised row shape,
    or a Hub dataset that is not cached while offline. The message says how to point the
    source at a local file instead."""


class MixSpecError(RsiHubError):
    """A data mix specification (`name:all|N,...`) is malformed or names an unknown source."""


class HoldoutInputError(RsiHubError):
    """An input would put held-out evaluation prompts into training data (card section 2)."""


class RecipeError(RsiHubError):
    """A training recipe or one of its `key=value` overrides is invalid; the message names the
    key and lists the valid ones."""


class MissingGpuExtraError(RsiHubError):
    """Packed training was asked for without the CUDA kernels of the `gpu` extra."""


class ShippedFileMissingError(RsiHubError, FileNotFoundError):
    """A file rsi-hub ships (a template, a task, release facts, a launch file) is not installed.

    The message names the missing path and how to reinstall.
    """
