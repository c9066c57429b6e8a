"""The listing tables of `seq eval ls`, `seq benchmark evals` and `seq policy ls`, made to read at
80 columns: ids, statuses, counts and times are never wrapped or cut; the free text (what ran, the
parameters) wraps under its own heading instead."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table


def _table(*columns: str, wrapping: Sequence[str] = ()) -> Table:
    """A light table: whole values in every column but those in `wrapping`, which fold."""
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, padding=(0, 1))
    for column in columns:
        if column in wrapping:
            table.add_column(column, overflow="fold", ratio=1, min_width=max(len(column), 12))
        else:
            table.add_column(column, no_wrap=True)
    return table


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in params.items())


def arms_text(arms: Sequence[Mapping[str, Any]]) -> str:
    """One arm: the parameters the eval set; several: each arm's name, and what all share."""
    if not arms:
        return ""
    if len(arms) == 1:
        return _params_text(arms[0].get("params") or {})
    shared = {
        key: value
        for key, value in (arms[0].get("params") or {}).items()
        if all((arm.get("params") or {}).get(key) == value for arm in arms)
    }
    text = "arms: " + " | ".join(str(arm.get("name") or "?") for arm in arms)
    return text + (f"; all: {_params_text(shared)}" if shared else "")


def print_eval_table(rows: list[dict[str, Any]], console: Console | None = None) -> None:
    """Evals, one per row: whole id, status, what ran (benchmark + policies, then the parameters and
    arms on the line below), episodes done of the total, when it was created."""
    console = console or Console(highlight=False)
    table = _table("id", "status", "ran", "episodes", "created", wrapping=("ran",))
    cells: list[list[str]] = []
    for row in rows:
        policies = list(dict.fromkeys(arm["policy"] for arm in row.get("arms", []) if arm.get("policy")))
        ran = f"{row['benchmark']}\n+ {' vs '.join(policies) or row['policy']}"  # names whole, each on a line
        extra = "\n".join(text for text in (arms_text(row.get("arms", [])), _failure_text(row)) if text)
        cells.append(
            [
                row["id"],
                row["status"],
                ran + (f"\n{extra}" if extra else ""),
                f"{row['done']}/{row['total']}",
                time.strftime("%Y-%m-%d\n%H:%M", time.localtime(row["created_at"])),
            ]
        )
    headers = [str(column.header) for column in table.columns]
    others = sum(
        max([len(headers[i]), *(len(line) for cell in cells for line in cell[i].splitlines())])
        for i in (0, 1, 3, 4)
    )
    room = console.width - others - 2 * len(headers) - 3  # each cell's padding, the table's edges
    for cell in cells:
        table.add_row(*cell[:2], break_at_separators(cell[2], room), *cell[3:])
    console.print(table)


SEPARATORS = "-_@.=/:|,"  # where a name too long for its column may break: after one of these


def break_at_separators(text: str, width: int) -> str:
    """`text` wrapped to `width` at spaces, a word longer than a line broken after a separator
    (`-`, `_`, `@`, `.`, `=` …) rather than mid-word as a folding column would
    (`metaworld-expert-` / `finetuned@v1`, not `metaworld-expe` / `rt`)."""
    if width < 8:  # too narrow to choose: the column folds as it must
        return text
    lines: list[str] = []
    for line in text.split("\n"):
        current = ""
        for word in line.split(" "):
            while True:
                space = width - (len(current) + 1 if current else 0)
                if len(word) <= space:
                    current = f"{current} {word}" if current else word
                    break
                if current and len(word) <= width:  # whole on a line of its own
                    lines.append(current)
                    current = ""
                    continue
                cut = max(word.rfind(mark, 0, space) for mark in SEPARATORS)
                if cut + 1 < space // 3:  # no separator far enough along
                    if current:
                        lines.append(current)
                        current = ""
                        continue
                    cut = width - 1  # a word with none: folded at the width
                lines.append(f"{current} {word[: cut + 1]}" if current else word[: cut + 1])
                current, word = "", word[cut + 1 :]
        lines.append(current)
    return "\n".join(lines)


def _check_text(row: Mapping[str, Any]) -> str:
    """A benchmark's status, then what its check measured: step time, observation layout."""
    status = str(row.get("status") or ("built-in" if row.get("builtin") else "deployed"))
    figures = row.get("check") or {}
    if figures.get("step_ms") is not None:
        status += f"\n{figures['step_ms']:g} ms/step"
    observation = figures.get("observation")
    if isinstance(observation, dict):
        status += "\nobs " + ", ".join(f"{key} {value}" for key, value in observation.items())
    elif observation is not None:
        status += f"\nobs {observation}"
    return status


def _failure_text(row: Mapping[str, Any]) -> str:
    """Why a failed eval failed, where the record says."""
    return f"failed: {row['error']}" if row.get("status") == "failed" and row.get("error") else ""


def print_policy_table(rows: list[dict[str, Any]], console: Console | None = None) -> None:
    """Policies built in or registered: latest version, kind, latest eval, parameters (defaults)."""
    table = _table("name", "version", "kind", "latest eval", "parameters", wrapping=("parameters",))
    for row in rows:
        parameters = ", ".join(f"{name}={spec.get('default')!r}" for name, spec in row["parameters"].items())
        latest = f"{row['latest_eval']}\n({row['latest_eval_status']})" if row["latest_eval"] else "—"
        version = f"v{row['version']}" if row["version"] else "—"
        table.add_row(row["name"], version, row["kind"], latest, parameters or "—")
    (console or Console(highlight=False)).print(table)


def print_benchmark_table(rows: list[dict[str, Any]], console: Console | None = None) -> None:
    """Benchmarks usable by name: latest version, status (its check at deploy, with the step time
    and observation it measured), latest eval."""
    table = _table("name", "version", "status", "latest eval", wrapping=("status",))
    for row in rows:
        version = f"v{row['version']}" if row["version"] else "—"
        latest = f"{row['latest_eval']}\n({row['latest_eval_status']})" if row["latest_eval"] else "—"
        table.add_row(row["name"], version, _check_text(row), latest)
    (console or Console(highlight=False)).print(table)
