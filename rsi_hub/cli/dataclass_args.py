"""argparse options generated from a config dataclass (as TRL's `SFTConfig` / `HfArgumentParser`).

A config dataclass (`EvalConfig`, `SynthConfig`, `PrepConfig`) is the one place of each option's
name, type, default and help. Field metadata says how the field shows on the command line:

- `help`: the help text; the default is appended as `(default X)` unless it is None or False.
- `flag`: the option string (default `--field-name`); `positional: True` makes it positional.
- `metavar`, `choices`, `action` (`store_true`, `store_false`, `append`): as argparse's.
- `from_cli`: turns the parsed value into the field's value (`"a,b"` -> `("a", "b")`).
- `cli: False`: library-only, not on the command line.

Choices also come from a `Literal[...]` annotation. Validation is not done here: the
dataclass's `__post_init__` checks the values and raises our typed error, for library callers
and the CLI alike.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from pathlib import Path
from typing import Any, Literal, TypeVar

T = TypeVar("T")

_SCALARS: tuple[type, ...] = (int, float, str, Path)


def _cli_fields(cls: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if f.metadata.get("cli", True)]


def _scalar_type(annotation: Any) -> tuple[type | None, tuple[Any, ...] | None]:
    """The argparse `type` and the Literal choices of one annotation (`X | None` unwrapped)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            annotation = args[0]
    if typing.get_origin(annotation) is Literal:
        choices = typing.get_args(annotation)
        return type(choices[0]), choices
    if annotation in _SCALARS:
        return annotation, None
    return None, None  # a collection or custom type: `from_cli` converts the string


def _default(f: dataclasses.Field[Any]) -> Any:
    return None if f.default is dataclasses.MISSING else f.default


def add_dataclass_arguments(parser: argparse.ArgumentParser, cls: type) -> None:
    """Add one argparse option (or positional) per CLI field of the dataclass `cls`.

    The option's dest is the field name, so `dataclass_from_args(cls, namespace)` reads it back.
    A field without a default is a required option (or a positional).
    """
    hints = typing.get_type_hints(cls)
    for f in _cli_fields(cls):
        meta = f.metadata
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = _default(f)
        help_text = meta.get("help", "")
        # Identity, not equality: a default of 0 is shown, None / False / () are not.
        hidden = default is None or default is False or default == ()
        if not hidden and "action" not in meta:
            help_text = f"{help_text} (default {default})".strip()
        kwargs: dict[str, Any] = {"help": help_text}
        if "metavar" in meta:
            kwargs["metavar"] = meta["metavar"]
        action = meta.get("action")
        if action in ("store_true", "store_false"):
            kwargs["action"] = action
        else:
            arg_type, choices = _scalar_type(hints[f.name])
            choices = meta.get("choices", choices)
            if arg_type is not None and "from_cli" not in meta:
                kwargs["type"] = arg_type
            if choices is not None:
                kwargs["choices"] = choices
            if action == "append":
                kwargs["action"] = "append"
        if meta.get("positional"):
            parser.add_argument(f.name, **kwargs)
            continue
        flag = meta.get("flag", "--" + f.name.replace("_", "-"))
        if required:
            kwargs["required"] = True
        else:
            # The dataclass applies its own default: argparse passes None (or False) through.
            kwargs["default"] = None if action != "store_false" else True
            if action == "store_true":
                kwargs["default"] = False
        parser.add_argument(flag, dest=f.name, **kwargs)


def dataclass_from_args(cls: type[T], namespace: argparse.Namespace, **extra: Any) -> T:
    """Build `cls` from parsed arguments; options left unset take the dataclass's default.

    `extra` sets fields the command line does not carry. The dataclass's `__post_init__`
    validates the result (our typed error, naming the field).
    """
    values: dict[str, Any] = {}
    for f in _cli_fields(cls):
        value = getattr(namespace, f.name, None)
        if value is None:
            continue
        if f.metadata.get("action") in ("store_true", "store_false") and value == (
            f.metadata["action"] == "store_false"
        ):
            continue  # the flag was not given: keep the dataclass default
        convert = f.metadata.get("from_cli")
        values[f.name] = convert(value) if convert is not None else value
    values.update(extra)
    return cls(**values)
