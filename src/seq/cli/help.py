"""How every `seq` command shows its help and reads its flags: plain text wrapped to the terminal
(at most 80 columns), options in sections, each value named by what it is (`NAME`, `N`, `FILE`),
never by a Python type (`<str>`, `<bool>`); a flag given a value (`--trajectories true`) is told
it is a flag."""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.core import TyperCommand

_BOOL_WORDS = {"true", "false", "yes", "no", "on", "off", "1", "0"}


def _metavar(param: Any) -> str:
    """What a value is called in the help when the option did not say (typer would print its
    Python type)."""
    if getattr(param, "is_flag", False):
        return ""
    described = getattr(param, "type_descriptor", None)
    annotation = getattr(described, "annotation", str)
    if getattr(described, "is_path", False):
        return "PATH"
    if annotation is int:
        return "N"
    if annotation is float:
        return "NUMBER"
    return str(param.name or "value").upper()


def _flag_given_a_value(command: Any, args: list[str]) -> str | None:
    """`--x is a flag …` when `args` hold a flag followed by a word such as `true`."""
    flags = {
        name: param for param in command.params if getattr(param, "is_flag", False) for name in param.opts
    }
    for before, word in zip(args, args[1:], strict=False):
        if before in flags and word.lower() in _BOOL_WORDS:
            negative = flags[before].secondary_opts
            spelled = f"{before} or {negative[0]}" if negative else before
            return f"{before} is a flag and takes no value: write {spelled}"
    return None


class SectionedHelp(TyperCommand):
    """A command whose help lists its options in sections (their `rich_help_panel`)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        given = list(args)
        try:
            return super().parse_args(ctx, args)
        except Exception as error:  # typer's own click: its UsageError is not importable publicly
            message = getattr(error, "message", "")
            hint = _flag_given_a_value(self, given)
            if hint and isinstance(message, str) and "unexpected extra argument" in message:
                error.message = f"{message}: {hint}."  # type: ignore[attr-defined]
            raise

    def format_usage(self, ctx: Any, formatter: Any) -> None:
        pieces = [re.sub(r"^\{(.*)\}$", r"\1", piece) for piece in self.collect_usage_pieces(ctx)]
        formatter.write_usage(ctx.command_path, " ".join(pieces))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.get_params(ctx):
            if param.metavar is None:
                param.metavar = _metavar(param)
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        sections: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if param.param_type_name == "argument" and record is not None:
                record = (param.metavar or str(param.name).upper(), record[1])  # its name, not its type
            if record is not None:
                plain = "Arguments" if param.param_type_name == "argument" else "Options"
                title = getattr(param, "rich_help_panel", None) or plain
                sections.setdefault(title, []).append(record)
        for title, rows in sections.items():
            with formatter.section(title):
                formatter.write_dl(rows)


def command_line(help: str) -> typer.Typer:
    """A program's top command (`seq`, `seqbench`): help without arguments, no shell-completion
    options, and a traceback left to the program's own handler."""
    return typer.Typer(help=help, no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)


def plain_help(app: typer.Typer) -> typer.Typer:
    """Give every command of `app` (and of its groups) the plain, sectioned help."""
    app.rich_markup_mode = None
    for command in app.registered_commands:
        if command.cls in (None, TyperCommand):
            command.cls = SectionedHelp
    for group in app.registered_groups:
        if group.typer_instance is not None:
            plain_help(group.typer_instance)
    return app
