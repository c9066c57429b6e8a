"""Command-line options: the parsing of list-valued ones (`--seeds 0-4,9`, `--tasks a,b`,
`--param k=v`), and typer options built from a request dataclass's fields (`seq.engine.request`),
so that a command and its Python twin share one declaration of each option."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Collection
from dataclasses import Field
from pathlib import Path
from typing import Any

import typer

from seq.engine.request import Cli, cli_of, default_of, help_group, help_of
from seq.errors import SeqInputError


def split_list(values: list[str] | None, flag: str) -> list[str] | None:
    """`--tasks a,b --tasks c` → `["a", "b", "c"]`; an empty item (`--tasks ''`, `0,,2`) is refused,
    naming `flag`, rather than dropped: dropping it would silently widen or change the selection."""
    if not values:
        return None
    items = []
    for value in values:
        parts = [part.strip() for part in value.split(",")]
        example = "0,1,2 or 0-4" if flag == "--seeds" else "a,b"
        if not value.strip():
            raise SeqInputError(
                f"{flag} {value!r} is empty; give at least one, such as {example}, or leave it out."
            )
        if "" in parts:
            raise SeqInputError(
                f"{flag} {value}: an empty item; separate items with single commas, such as {example}."
            )
        items.extend(parts)
    return items


def either_spelling(value: Any, old: Any, flag: str, old_flag: str) -> Any:
    """The value of an option given as `flag` or as its old spelling `old_flag` (which still works,
    unlisted in the help); both, with different values, is refused."""
    if value is not None and old is not None and value != old:
        raise SeqInputError(f"{old_flag} {old} and {flag} {value}: give it once, as {flag}.")
    return value if value is not None else old


def parse_seeds(values: list[str] | None) -> list[int] | None:
    """`--seeds 0,1,2`, `--seeds 0-4` (inclusive) or repeated `--seeds`."""
    parts = split_list(values, "--seeds")
    if parts is None:
        return None
    seeds: list[int] = []
    for part in parts:
        try:
            if "-" in part.lstrip("-"):
                first, last = part.split("-", 1) if not part.startswith("-") else (part, part)
                span = range(int(first), int(last) + 1)
            else:
                span = range(int(part), int(part) + 1)
        except ValueError:
            raise SeqInputError(
                f"--seeds {part}: expected integers like 0,1,2 or a range like 0-4."
            ) from None
        if not span:
            raise SeqInputError(
                f"--seeds {part}: a descending range; write it low to high, as {last}-{first}."
            )
        if len(span) > 10**7:  # an eval holds at most that many episodes (seq.engine.plan)
            raise SeqInputError(f"--seeds {part}: {len(span):,} seeds; at most 10,000,000.")
        seeds.extend(span)
    return seeds


def parse_params(values: list[str] | None, option: str = "--param") -> dict[str, str]:
    """`--param noise=0.3 --param eval.steps_per_query=5` → `{"noise": "0.3", ...}`; `option`
    names the flag in errors."""
    params: dict[str, str] = {}
    for value in values or []:
        key, sep, raw = value.partition("=")
        if not sep or not key.strip():
            raise SeqInputError(f"{option} {value}: expected NAME=VALUE, such as noise=0.3.")
        params[key.strip()] = raw
    return params


def parse_sweep(values: list[str] | None, option: str = "--sweep") -> dict[str, list[str]] | None:
    """`--sweep policy.noise=0.0,0.5,1.0` → `{"policy.noise": ["0.0", "0.5", "1.0"]}`."""
    if not values:
        return None
    sweep: dict[str, list[str]] = {}
    for key, raw in parse_params(values, option).items():
        parts = [part.strip() for part in raw.split(",") if part.strip()]
        if not parts:
            raise SeqInputError(f"{option} {key}=: expected values, such as {key}=0.0,0.5,1.0.")
        sweep[key] = parts
    return sweep


# What each `Cli.kind` takes on the command line, and how its text becomes the Python value.
_CLI_TYPES: dict[str, type] = {"flag": bool, "list": list[str], "seeds": list[str], "params": list[str]}
_CLI_TYPES["sweep"] = list[str]


def parse_option(item: Field, value: Any) -> Any:
    """The Python value of a request field given on the command line as `value`."""
    cli = cli_of(item)
    assert cli is not None
    flag = cli.spellings(item.name)[0]
    if cli.kind == "list":
        return split_list(value, flag)
    if cli.kind == "seeds":
        return parse_seeds(value)
    if cli.kind == "params":
        return parse_params(value, flag) or None
    if cli.kind == "sweep":
        return parse_sweep(value, flag)
    return value


def _value_type(hint: Any) -> type:
    """The type the command line converts a value option to: int, float, else str."""
    choices = [arg for arg in typing.get_args(hint) if arg is not type(None)] or [hint]
    return choices[0] if choices[0] in (int, float) else str


def _typer_parameter(item: Field, hint: Any) -> inspect.Parameter:
    cli: Cli = cli_of(item)  # type: ignore[assignment]
    default = default_of(item)
    panel = help_group(item.name)
    help = help_of(item) + (f"  [default: {cli.shown}]" if cli.shown else "")
    if cli.kind == "argument":
        info = typer.Argument(
            default, help=help, metavar=cli.metavar, show_default=False, rich_help_panel=panel
        )
    elif cli.kind == "flag":
        spelled, *short = cli.spellings(item.name)  # `--x` (then `-x`, spelled without a --no-)
        flags = [f"{spelled}/--no-{spelled.removeprefix('--')}", *short]
        info = typer.Option(
            default, *flags, help=help, metavar="", show_default=default, rich_help_panel=panel
        )
    else:
        info = typer.Option(
            default if cli.kind == "value" else None,
            *cli.spellings(item.name),
            help=help,
            metavar=cli.metavar,
            show_default=cli.shown is None and default is not None,
            rich_help_panel=panel,
        )
    annotation = _CLI_TYPES.get(cli.kind) or _value_type(hint)
    return inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation)


def command_from(
    request_type: type,
    body: Callable[..., None],
    extra: list[inspect.Parameter],
    doc: str,
    leave_out: Collection[str] = (),
) -> Callable[..., None]:
    """A typer command whose options are the fields of the dataclass `request_type` that have a
    command-line spelling, but those named in `leave_out` (then `extra`); it calls
    `body(request_values, **extra_values)` with each field parsed to its Python value."""
    hints = typing.get_type_hints(request_type)
    given = [
        item
        for item in dataclasses.fields(request_type)
        if cli_of(item) is not None and item.name not in leave_out
    ]
    parameters = [_typer_parameter(item, hints[item.name]) for item in given]

    def command(**values: Any) -> None:
        request = {item.name: parse_option(item, values.pop(item.name)) for item in given}
        body(request, **values)

    command.__signature__ = inspect.Signature([*parameters, *extra])  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in [*parameters, *extra]}
    command.__doc__ = doc
    return command


def extra_option(
    python: str,
    default: Any,
    *flags: str,
    help: str,
    annotation: Any,
    panel: str | None = None,
    metavar: str | None = None,
) -> inspect.Parameter:
    """An option of `command_from` beyond the request's; a bool one is a flag (`--x/--no-x` if
    `flags` say so)."""
    metavar = metavar or ("" if annotation is bool else "FILE" if annotation is Path else None)
    info = typer.Option(
        default, *flags, help=help, metavar=metavar, show_default=False, rich_help_panel=panel
    )
    return inspect.Parameter(python, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation)
