"""Declared parameters: typed keyword arguments with defaults that an eval may set.

A policy's `@seq.infer` and a benchmark's `@seq.setup` declare what an eval can change the way
Python does: `def infer(self, obs, *, seed=None, instruction=None, noise: float = 0.1)`. A string
parameter typed `Literal["state", "pixels"]` takes only those values, and a number typed
`Annotated[int, seq.Range(1, 4096)]` only those between, so an eval that names another is refused
before any episode runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from seq.errors import SeqInputError

_TYPES: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}
_RESERVED = {"self", "obs", "seed", "instruction", "env", "variant", "weights_dir"}


@dataclass(frozen=True)
class Range:
    """The values a number parameter may take, bounds included (None: unbounded), declared as
    `Annotated[int, seq.Range(1, 4096)]`."""

    low: float | None = None
    high: float | None = None

    def holds(self, value: float) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def __str__(self) -> str:
        if self.low is not None and self.high is not None:
            return f"from {self.low} to {self.high}"
        return f"of at least {self.low}" if self.low is not None else f"of at most {self.high}"


@dataclass(frozen=True)
class Parameter:
    """One declared parameter: its name, type (int, float, bool or str), default, the values a
    string may take (`choices`; empty: any) and those a number may (`bounds`; None: any)."""

    name: str
    type: str
    default: Any
    choices: tuple[str, ...] = ()
    bounds: Range | None = None

    def describe(self) -> dict[str, Any]:
        """The parameter as a record and a server's hello declare it."""
        return {
            "type": self.type,
            "default": self.default,
            **({"choices": list(self.choices)} if self.choices else {}),
            **({"range": [self.bounds.low, self.bounds.high]} if self.bounds else {}),
        }

    @property
    def kind(self) -> str:
        """Its type as an error message names it: `float`, `int from 1 to 4096`, or `one of
        state, pixels`."""
        if self.choices:
            return f"one of {', '.join(self.choices)}"
        return f"{self.type} {self.bounds}" if self.bounds else self.type

    def coerce(self, value: Any, where: str) -> Any:
        """Convert a CLI string or a Python value to this parameter's type, or refuse it."""
        kind = _TYPES[self.type]
        if isinstance(value, str) and kind is not str:
            text = value.strip()
            if kind is bool:
                if text.lower() in {"1", "true", "yes", "on"}:
                    return True
                if text.lower() in {"0", "false", "no", "off"}:
                    return False
            else:
                try:
                    converted = kind(text)
                except ValueError:
                    converted = None
                if converted is not None:
                    return self.coerce(converted, where)
            raise SeqInputError(f"{where}: parameter {self.name!r} expects {self.type}, got {value!r}.")
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not kind:
            raise SeqInputError(f"{where}: parameter {self.name!r} expects {self.type}, got {value!r}.")
        if self.choices and value not in self.choices:
            raise SeqInputError(f"{where}: parameter {self.name!r} expects {self.kind}, got {value!r}.")
        if self.bounds and isinstance(value, int | float) and not self.bounds.holds(value):
            raise SeqInputError(f"{where}: parameter {self.name!r} expects {self.kind}, got {value!r}.")
        return value


def _bounds(annotation: Any) -> tuple[Any, Range | None]:
    """An `Annotated[number, seq.Range(...)]` annotation's type and range; others as they are."""
    if get_origin(annotation) is Annotated:
        base, *metadata = get_args(annotation)
        ranges = [item for item in metadata if isinstance(item, Range)]
        if base in (int, float) and ranges:
            return base, ranges[0]
        return base, None
    return annotation, None


def _type_name(annotation: Any, default: Any) -> str | None:
    if get_origin(annotation) is Literal:
        return "str" if all(isinstance(choice, str) for choice in get_args(annotation)) else None
    if isinstance(annotation, str):
        return annotation if annotation in _TYPES else None
    for name, kind in _TYPES.items():
        if annotation is kind:
            return name
    if annotation is inspect.Parameter.empty and default is not None:
        return type(default).__name__ if type(default).__name__ in _TYPES else None
    return None


def declared_parameters(fn: Callable[..., Any] | None, where: str) -> dict[str, Parameter]:
    """The typed keyword parameters with defaults that `fn` declares (reserved names left out)."""
    if fn is None:
        return {}
    declared: dict[str, Parameter] = {}
    try:  # `from __future__ import annotations` leaves them as text; Literal[...] needs evaluating
        signature = inspect.signature(fn, eval_str=True)
    except Exception:  # a name only a type checker imports: the text is what there is
        signature = inspect.signature(fn)
    for param in signature.parameters.values():
        if param.name in _RESERVED or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        if param.default is inspect.Parameter.empty:
            raise SeqInputError(
                f"{where}: parameter {param.name!r} needs a default value so an eval can leave it unset."
            )
        annotation, bounds = _bounds(param.annotation)
        type_name = _type_name(annotation, param.default)
        if type_name is None:
            raise SeqInputError(
                f"{where}: parameter {param.name!r} must be typed int, float, bool, str or a Literal "
                f"of strings, got {param.annotation!r}."
            )
        choices = get_args(annotation) if get_origin(annotation) is Literal else ()
        declared[param.name] = Parameter(param.name, type_name, param.default, choices, bounds)
        if bounds and not bounds.holds(param.default):
            raise SeqInputError(
                f"{where}: parameter {param.name!r} defaults to {param.default!r}, which is not "
                f"{bounds}."
            )
        if choices and param.default not in choices:
            raise SeqInputError(
                f"{where}: parameter {param.name!r} defaults to {param.default!r}, which is not one of "
                f"{', '.join(choices)}."
            )
    return declared


def resolve_parameters(
    given: Mapping[str, Any], sides: Mapping[str, Mapping[str, Parameter]]
) -> dict[str, dict[str, Any]]:
    """Route `--param` values to the side that declares them, typed, with defaults filled in.

    `given` keys are `side.name` or a bare `name` when only one side declares it; `sides` maps a
    side (`policy`, `benchmark`, `eval`) to its declared parameters. Returns each side's values.
    """
    values = {side: {p.name: p.default for p in params.values()} for side, params in sides.items()}
    everything = settable(sides)
    for key, raw in given.items():
        side, _, name = key.rpartition(".")
        if side:
            owners = [side] if name in sides.get(side, {}) else []
        else:
            owners = [s for s, params in sides.items() if name in params]
        if not owners:
            raise SeqInputError(f"--param {key}: no side declares it; the eval can set: {everything}.")
        if len(owners) > 1:
            raise SeqInputError(
                f"--param {key}: declared by {' and '.join(owners)}; write {owners[0]}.{name} to choose."
            )
        owner = owners[0]
        try:
            values[owner][name] = sides[owner][name].coerce(raw, f"--param {key}")
        except SeqInputError as error:
            raise SeqInputError(f"{str(error).rstrip('.')}; the eval can set: {everything}.") from None
    return values


def settable(sides: Mapping[str, Mapping[str, Parameter]]) -> str:
    """Every parameter an eval can set, as `side.name (type)`, for error messages."""
    return (
        ", ".join(f"{side}.{name} ({p.kind})" for side, params in sides.items() for name, p in params.items())
        or "none"
    )
