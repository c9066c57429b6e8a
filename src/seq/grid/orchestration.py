"""Run a grid: every cell an ordinary eval (`seq.eval.run`), the summary, the gate.

The grid adds no execution path of its own: a group of cells is one call of `seq.eval.run` with an
arm per cell (`seq.Arm`), and a resume continues that eval (`rerun_failed=`), which runs its work
items without a result and its errored ones again. A crashed group is an error cell per cell and
the grid goes on.
"""

from __future__ import annotations

import contextlib
import logging
import os
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from seq.errors import EvalCanceled, SeqInputError, make_output_folder
from seq.grid import rundir, summary, versions
from seq.grid.cells import Arm, Cell, EvalGroup, check_floors, expand, floor_of, group
from seq.grid.config import GridConfig
from seq.grid.history import remember
from seq.grid.preflight import servers
from seq.grid.results import CellResult, errored, from_report, last_attempts, last_line
from seq.record.episode import EpisodeResult
from seq.record.store import EvalRow

log = logging.getLogger("seq.grid")
Say = Callable[[str], None]
OnStart = Callable[[EvalRow], None]
OnResult = Callable[[EpisodeResult], None]


def load(config: GridConfig | str | Path | dict) -> GridConfig:
    """A `GridConfig` from itself, a YAML path, or plain data."""
    if isinstance(config, GridConfig):
        return config
    if isinstance(config, (str, Path)):
        return GridConfig.from_yaml(config)
    return GridConfig.from_dict(config)


def run(
    config: GridConfig | str | Path | dict,
    *,
    gate: bool = False,
    resume: bool = False,
    gate_on: str = "rate",
    threshold: float | None = None,
    families: Sequence[str] | None = None,
    modes: Sequence[str] | None = None,
    policies: Sequence[str] | None = None,
    output_dir: str | Path | None = None,
    say: Say | None = None,
    on_start: OnStart | None = None,
    on_result: OnResult | None = None,
) -> summary.Summary:
    """Run every cell of `config` (a `GridConfig`, a YAML path or a dict) and return the summary.

    - `gate`: judge the run (`Summary.passed`, `Summary.ok`); `threshold` overrides the config's
      `gate_threshold`; `gate_on="lower-bound"` gates on the pooled interval's lower bound.
    - `resume`: reuse the latest run directory under the output dir; cells persisted there are
      skipped, the others (error cells included) run. A config whose measured keys changed since
      that run began is refused.
    - `families` / `modes` / `policies` narrow the grid (families and modes: the axes shape only).
    - `say(line)` is told what runs as it runs; `on_start(row)` and `on_result(episode)` are
      passed to each cell's `seq.eval.run` (its progress).

    A run stopped before every cell ran (Ctrl-C) leaves a summary with `complete` false; such a
    summary never passes the gate.
    """
    say = say or (lambda line: log.info(line))
    grid = load(config)
    if gate_on not in summary.GATE_ON:
        raise SeqInputError(f"--gate-on {gate_on}: expected one of {', '.join(summary.GATE_ON)}.")
    threshold = grid.gate_threshold if threshold is None else threshold
    if not 0.0 <= threshold <= 1.0:
        raise SeqInputError(f"--threshold {threshold}: expected a rate in [0, 1].")
    check_floors(grid, expand(grid))  # against the whole grid: a filter may leave a floor idle
    cells = expand(grid, families, modes, policies)
    if not cells:
        raise SeqInputError(
            f"{grid.source}: no cell is left to run (check the filters and modes.*.policies)."
        )
    groups = group(cells)
    entries = list({cell.policy.id: cell.policy for cell in cells if cell.policy.served}.values())
    floors = {cell.key: floor_of(grid, cell.key) for cell in cells}
    with servers(entries, grid.source):  # every server answers, every eval checks, before any runs
        plans = _check_groups(groups, grid.source)
        where = "--output" if output_dir is not None else f"{grid.source}: key 'output_dir'"
        run_dir, resumed = _run_dir(grid, Path(output_dir or grid.output_dir).resolve(), resume, where, say)
        results: dict[str, CellResult] = {}
        now = versions.resolved(groups, plans)
        if resumed:
            for cell in cells:
                kept = rundir.load_cell(run_dir, cell.path)
                if kept is not None:
                    results[cell.key] = kept
            versions.check_resume(run_dir, cells, results, now, grid.source)
            say(f"resuming {run_dir}")
        versions.record(run_dir, now)
        remember(run_dir, grid.source)

        def finish() -> summary.Summary:
            done = [results[cell.key] for cell in cells if cell.key in results]
            built = summary.build(done, run_dir=run_dir, grid=rundir.config_echo(grid), gated=gate,
                                  threshold=threshold, gate_on=gate_on, floors=floors,
                                  planned=len(cells))  # fmt: skip
            summary.write(built)
            return built

        offset = 0
        try:
            for found in groups:
                todo = [arm for arm in found.arms if any(c.key not in results for c in arm.cells)]
                if not todo:
                    say(f"{found.first.column}: {len(found.cells)} cell(s) done already, skipped")
                    continue
                with _devices_from(offset):  # each eval's workers start on the next devices
                    _run_group(found, todo, run_dir, resume, results, say, on_start, on_result)
                offset += found.first.workers or 1
                finish()
        except (EvalCanceled, KeyboardInterrupt):  # Ctrl-C in an eval or between two: a partial summary
            finish()
            raise
    for mode in dict.fromkeys(cell.mode for cell in cells):
        mine = [results.get(cell.key) for cell in cells if cell.mode == mode]
        if all(r is not None and not r.error for r in mine):
            rundir.mark_done(run_dir / mode, f"mode {mode}")
    rundir.mark_done(run_dir, "grid")
    return finish()


@contextlib.contextmanager
def _devices_from(offset: int) -> Iterator[None]:
    """`SEQ_DEVICES_OFFSET` for the evals started inside (the engine reads it as workers start)."""
    before = os.environ.get("SEQ_DEVICES_OFFSET")
    os.environ["SEQ_DEVICES_OFFSET"] = str(offset)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("SEQ_DEVICES_OFFSET", None)
        else:
            os.environ["SEQ_DEVICES_OFFSET"] = before


def _run_dir(grid: GridConfig, output_dir: Path, resume: bool, where: str, say: Say) -> tuple[Path, bool]:
    """The run directory, and whether it is an earlier run's (a resume) or a fresh one."""
    if resume:
        latest = rundir.latest_run_dir(output_dir, rundir.config_identity(grid))
        if latest is not None:
            for key in rundir.check_unchanged(latest, grid):
                say(f"warning: {key} changed since {latest.name} began; the gate uses the new value")
            return latest, True
        say(f"--resume: {output_dir} holds no run of {grid.source}; starting a fresh one")
    make_output_folder(output_dir, where)
    try:
        run_dir = rundir.new_run_dir(output_dir)
        rundir.write_grid(run_dir, grid)
    except OSError as error:
        raise SeqInputError(
            f"{where} {output_dir}: cannot make a run directory there ({error.strerror or error}); "
            "expected a folder that can be created and written."
        ) from None
    say(f"run directory {run_dir}")
    return run_dir, False


def _check_groups(groups: list[EvalGroup], source: str) -> dict[str, dict[str, Any]]:
    """Every eval is checked (names, tasks, parameters) before any runs: a typo is exit 2, not an
    error cell an hour in. Returns each group's dry run (the versions its names resolve to)."""
    import seq.eval

    plans = {}
    for found in groups:
        try:
            plans[found.id] = seq.eval.dry_run(**found.request(found.arms))
        except SeqInputError as error:
            keys = ", ".join(cell.key for cell in found.cells[:3])
            more = f" and {len(found.cells) - 3} more" if len(found.cells) > 3 else ""
            words = _config_words(found.first, str(error))
            raise SeqInputError(f"{source}: cells {keys}{more}: {words}") from None
    return plans


def _config_words(cell: Cell, message: str) -> str:
    """An eval's refusal in the config's words: `--tasks x: …` (a flag nobody typed) becomes
    `key 'families.f.variations.v.tasks': x: …`."""
    flag, _, rest = message.partition(" ")
    if flag in cell.config_keys:
        return f"key {cell.config_keys[flag]!r}: {rest}"
    return message


def _run_group(
    found: EvalGroup,
    todo: list[Arm],
    run_dir: Path,
    resume: bool,
    results: dict[str, CellResult],
    say: Say,
    on_start: OnStart | None = None,
    on_result: OnResult | None = None,
) -> None:
    import seq.eval

    names = [arm.name for arm in todo]
    state = rundir.group_state(run_dir, found.id) if resume else None
    if state is not None and not _exists(state["eval_id"]):  # removed since: run the cells afresh
        state = None
    eval_id = None

    def started(row: Any) -> None:
        nonlocal eval_id
        eval_id = row.id
        rundir.save_group_state(run_dir, found.id, row.id, names)
        arms = f"{found.first.column}: eval {row.id}, arms {', '.join(names)}"
        say(textwrap.fill(arms, 80, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False))
        if on_start is not None:
            on_start(row)

    try:
        if state is not None and set(names) <= set(state["arms"]):
            eval_id = state["eval_id"]
            say(f"{found.first.column}: continuing eval {eval_id}")
            report = seq.eval.run(
                rerun_failed=eval_id, envs=found.first.workers, on_start=on_start, on_result=on_result
            )
        else:
            report = seq.eval.run(**found.request(todo), on_start=started, on_result=on_result)
    except EvalCanceled:
        raise
    except Exception as error:  # a crashed eval is an error cell per cell; the grid goes on
        message = (
            str(error) if isinstance(error, SeqInputError) else last_line(f"{type(error).__name__}: {error}")
        )
        for arm in todo:
            for cell in arm.cells:
                results[cell.key] = errored(cell, message, eval_id)
        say(f"{found.first.column}: the eval failed: {message}")
        return
    for arm in todo:
        mine = [e for e in last_attempts(report.episodes) if e.arm in (arm.name, "")]
        for cell in arm.cells:
            result = from_report(cell, report, arm.name)
            rundir.link_videos(run_dir, result, mine)
            if not result.error:
                rundir.save_cell(run_dir, cell.path, result)
            results[cell.key] = result
            say(_cell_line(cell, result))


def _exists(eval_id: str) -> bool:
    import seq.eval

    try:
        seq.eval.status(eval_id)
    except SeqInputError:
        return False
    return True


def _cell_line(cell: Cell, result: CellResult) -> str:
    if result.error:
        return f"  {cell.key}: ERROR {result.error}"
    return f"  {cell.key}: success {result.n_success}/{result.n_trials}"
