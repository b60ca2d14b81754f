"""Exception classes of rsi-hub. Each message says what is wrong, where, and what to do next."""

from __future__ import annotations

from pathlib import Path


class RsiHubError(Exception):
    """Base class of every error rsi-hub raises on purpose; the CLI prints it and exits 2.

    Attributes:
        path: the file or folder the error is about, when there is one.
        field: the option, config field or record field the error is about, when there is one.
    """

    def __init__(
        self, message: str = "", *, path: str | Path | None = None, field: str | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        self.field = field


class ConfigError(RsiHubError, ValueError):
    """A config value (a command-line option or a config dataclass field) is invalid.

    `field` names the field; the message names the option and the valid values.
    """


class ServingContractError(RsiHubError):
    """A model folder breaks the serving contract (template, special ids, stop ids).

    The message names the file, the field and the fix.
    """


class GenerationError(RsiHubError, RuntimeError):
    """Generating an answer failed: an unreachable endpoint, a wrong model id, an input over the
    limit. The message names the endpoint or model and the fix."""


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


# --- the run-directory contract (rsi_hub.rundir) ---


class RunDirError(RsiHubError, ValueError):
    """A run-directory record (evidence, eval meta, provenance, sweep or release manifest) is
    malformed: not JSON, a required field missing, or a newer schema. The message names the
    file, the field and the command that regenerates the file."""


class RunFileMissingError(RsiHubError, FileNotFoundError):
    """A run-directory record file does not exist; the message says which command writes it."""


# --- one class per area and kind: each is also the matching standard exception, so callers
# may catch ValueError (bad input or config), OSError (files) or RuntimeError (a step failed) ---


class PromptError(RsiHubError, ValueError):
    """A generation prompt (pool record, prompt-file row) cannot be used: no id, no text, no
    checks, or a check the checker rejects. The message names the prompt id."""


class EvaluationError(RsiHubError, RuntimeError):
    """An evaluation could not run or its results cannot be trusted (lm-eval rendered a prompt
    off-protocol, a backend or Hub dataset is unavailable, results are stale for this checker)."""


class EvaluationInputError(ConfigError):
    """An evaluation was asked for with a bad value (unknown suite, task or backend, runs that
    cannot be paired, malformed PREF data); `field` names the option when there is one."""


class EvaluationFileError(RsiHubError, OSError):
    """An evaluation file or folder is missing or unreadable; `path` names it."""


class SynthError(RsiHubError, RuntimeError):
    """A synthesis run failed (a backend misbehaved or is not installed)."""


class SynthInputError(ConfigError):
    """A synthesis run was asked for with a bad value (mode, K, backend, prompts)."""


class SynthFileError(RsiHubError, OSError):
    """A file synthesis needs (checkpoint folder, scaffold) is missing; `path` names it."""


class ExperimentError(RsiHubError, RuntimeError):
    """An experiment step failed (a submitted job, an arm's command, a shard writer)."""


class ExperimentInputError(ConfigError):
    """An experiment was asked for with a bad value (grid, weights, plot axis, candidates)."""


class ExperimentFileError(RsiHubError, OSError):
    """A file or folder an experiment reads is missing or unreadable; `path` names it."""


class SlurmError(RsiHubError, RuntimeError):
    """A Slurm command (sbatch, sacct, squeue, scancel) is missing or refused a request."""


class DistributedSetupError(RsiHubError, RuntimeError):
    """A multi-process launch is not what its config asked for (FSDP silently off, fewer
    processes in the group than launched); the message names the setting and the fix."""


class NotAModelFolderError(RsiHubError, FileNotFoundError):
    """A local folder given as a model has no `config.json`; the message names the folder and
    the model folders inside it to pass instead."""


class ShippedFileMissingError(RsiHubError, FileNotFoundError):
    """A file rsi-hub ships (a template, a task, release facts, a launch file) is not installed.

    The message names the missing path and how to reinstall.
    """


# --- serving (rsi_hub.serving) ---


class ServingError(RsiHubError, RuntimeError):
    """`rsi-hub serve` cannot launch an engine (folder off-contract, model not found)."""


class EngineNotInstalledError(ServingError):
    """The serving engine asked for is not installed here; the message names the fix."""
