"""The cells of a grid, and the evals that run them.

A cell is (mode, policy, family, variation). Cells that share a benchmark and its episodes (the
same suite, tasks, seeds, trials and limits) run as the arms of one eval, so that their
comparisons pair episode by episode and they share workers and env caches. Two cells whose arm
would be the same (a policy that declares none of a mode's parameters) share one arm.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from seq.errors import SeqInputError
from seq.grid.config import GridConfig, Mode, PolicyEntry

SIDES = ("policy.", "benchmark.", "eval.", "adapter.")


@dataclass(frozen=True)
class Cell:
    """One cell of the grid and everything its eval needs."""

    mode: str
    policy: PolicyEntry
    family: str
    variation: str
    suite: str
    benchmark: str
    suites: tuple[str, ...] | None
    tasks: tuple[str, ...] | None
    seeds: tuple[int, ...] | None
    trials: int
    max_steps: int | None
    timeout_s: float | None
    workers: int | None
    record: str | None
    adapter: str | None
    params: Mapping[str, Any] = field(default_factory=dict)
    config_keys: Mapping[str, str] = field(default_factory=dict)  # eval flag -> the config key behind it

    @property
    def key(self) -> str:
        """`mode@policy/family/variation`: the cell's name in summaries and floors."""
        return f"{self.row}/{self.family}/{self.variation}"

    @property
    def row(self) -> str:
        """`mode@policy`: the cell's row in the pivots."""
        return f"{self.mode}@{self.policy.id}"

    @property
    def column(self) -> str:
        return f"{self.family}/{self.variation}"

    @property
    def path(self) -> str:
        """The cell's folder in the run directory."""
        return "/".join(_safe(part) for part in (self.mode, self.policy.id, self.family, self.variation))

    def eval_key(self) -> tuple:
        """What cells must share to run in one eval; a served policy runs its own eval."""
        served = (self.policy.id, self.mode) if self.policy.served else None
        return (self.benchmark, self.suites, self.tasks, self.seeds, self.trials, self.max_steps,
                self.timeout_s, self.workers, self.record, self.adapter, served)  # fmt: skip


@dataclass
class Arm:
    """One arm of a grid eval and the cells it measures."""

    name: str
    policy: PolicyEntry
    params: dict[str, Any]
    cells: list[Cell]


@dataclass
class EvalGroup:
    """Cells run as the arms of one eval."""

    id: str
    cells: list[Cell]
    arms: list[Arm]

    @property
    def first(self) -> Cell:
        return self.cells[0]

    def request(self, arms: Sequence[Arm]) -> dict[str, Any]:
        """The keyword arguments of `seq.eval.run` for `arms` of this group."""
        from seq.engine.arms import Arm as EvalArm

        cell = self.first
        options: dict[str, Any] = {
            "benchmark": cell.benchmark,
            "suites": list(cell.suites) if cell.suites else None,
            "tasks": list(cell.tasks) if cell.tasks else None,
            "seeds": list(cell.seeds) if cell.seeds is not None else None,
            "trials": cell.trials,
            "max_steps": cell.max_steps,
            "timeout_s": cell.timeout_s,
            "envs": cell.workers,
            "record": cell.record,
            "adapter": cell.adapter,
        }
        if cell.policy.served:
            entry = arms[0].policy
            options.update(policy_url=entry.url, policy_protocol=entry.protocol)
        if len(arms) == 1:  # an eval of one arm: its arm has no name in the record
            options.update(policy=arms[0].policy.policy, params=arms[0].params)
        else:
            options["arms"] = [EvalArm(arm.policy.policy, arm.params, arm.name) for arm in arms]
        return options


# What the run directory itself holds: a cell's folder must not be one of them.
RESERVED = ("summary.json", "summary.tsv", "grid.json", "origin.json", "versions.json", "evals",
            "videos", "aaa_done_flag.txt")  # fmt: skip


def video_name(parts: Sequence[Any]) -> str:
    """A recording's name in the flat `videos/` folder: `mode__policy__family__variation__…mp4`."""
    return "__".join(re.sub(r"[^A-Za-z0-9.=-]+", "-", str(part)) for part in parts) + ".mp4"


def _safe(text: str) -> str:
    """`text` as one folder name: letters, digits, `.`, `_` and `-`, never `.` or `..`."""
    cleaned = "".join(c if c.isalnum() or c in "._-" else "_" for c in text) or "_"
    return "_" * len(cleaned) if cleaned in (".", "..") else cleaned


def expand(
    config: GridConfig,
    families: Sequence[str] | None = None,
    modes: Sequence[str] | None = None,
    policies: Sequence[str] | None = None,
) -> list[Cell]:
    """Every cell of the grid, in run order, narrowed to the families/modes/policies given."""
    _check_filters(config, families, modes, policies)
    cells = _all_cells(config)
    _check_distinct(config, cells)
    return [
        cell
        for cell in cells
        if (families is None or cell.family in families)
        and (modes is None or cell.mode in modes)
        and (policies is None or cell.policy.id in policies)
    ]


def _all_cells(config: GridConfig) -> list[Cell]:
    if config.shape == "suites":
        cells = [_suite_cell(config, suite) for suite in config.suites]
    else:
        declared = {entry.id: _declared(entry) for entry in config.policies}
        _check_mode_params(config, declared)
        cells = [
            _axes_cell(config, mode, entry, family.name, family.benchmark, variation, declared[entry.id])
            for mode in config.modes
            for family in config.families
            for variation in family.variations
            for entry in config.policies
            if mode.policies is None or entry.id in mode.policies
        ]
    return cells


def _check_distinct(config: GridConfig, cells: Sequence[Cell]) -> None:
    """Every cell has a name and a folder of its own: two cells sharing one would overwrite each
    other's result, and a resume would take one for the other."""
    keys: dict[str, Cell] = {}
    paths: dict[str, Cell] = {}
    for cell in cells:
        video = video_name([cell.mode, cell.policy.id, cell.family, cell.variation]).lower()
        clash = keys.get(cell.key) or paths.get(cell.path.lower()) or paths.get(video)  # macOS: a is A
        if clash is not None:
            raise SeqInputError(
                f"{config.source}: cells {clash.key} and {cell.key} would share a name, the "
                f"folder {cell.path!r} or their videos' names in the run directory; rename one "
                "(names there keep letters, digits, '.', '_' and '-')."
            )
        if cell.path.split("/")[0] in RESERVED or cell.path.split("/")[1] == RESERVED[-1]:
            raise SeqInputError(
                f"{config.source}: cell {cell.key}: its folder {cell.path!r} would clash with the "
                "run directory's own files; rename its mode or policy."
            )
        keys[cell.key], paths[cell.path.lower()], paths[video] = cell, cell, cell


def _check_filters(config: GridConfig, families: Any, modes: Any, policies: Any) -> None:
    where = config.source
    if config.shape == "suites" and (families or modes):
        flag = "--families" if families else "--modes"
        raise SeqInputError(
            f"{flag}: {where} is a suites config (hand-curated cells); {flag} narrows the axes shape only."
        )
    known = {
        "--families": [f.name for f in config.families],
        "--modes": [m.name for m in config.modes],
        "--policies": sorted({c.policy for c in config.suites} | {p.id for p in config.policies}),
    }
    for flag, given in (("--families", families), ("--modes", modes), ("--policies", policies)):
        if given is not None and not given:
            raise SeqInputError(f"{flag}: empty; give at least one name, or leave the flag out.")
        for name in given or ():
            if name not in known[flag]:
                raise SeqInputError(f"{flag} {name}: {where} has no such one ({', '.join(known[flag])}).")


def _declared(entry: PolicyEntry) -> set[str] | None:
    """The parameters a policy declares, or None where unknown (a server, a name not registered)."""
    if entry.served or entry.policy is None:
        return None
    from seq.registry.policies import policies

    name = entry.policy.partition("@")[0]
    for row in policies():
        if row["name"] == name:
            return set(row["parameters"] or {})
    return None


def _bare(key: str) -> str:
    return key.removeprefix("policy.")


def _check_mode_params(config: GridConfig, declared: Mapping[str, set[str] | None]) -> None:
    """A mode parameter no policy of the grid declares is a typo, not a setting to ignore."""
    for mode in config.modes:
        for key in mode.params:
            if key.startswith(SIDES[1:]):
                continue
            takers = [pid for pid, names in declared.items() if names is None or _bare(key) in names]
            if not takers:
                raise SeqInputError(
                    f"{config.source}: key 'modes.{mode.name}.params.{key}': no policy of the grid "
                    f"declares a parameter {_bare(key)!r}."
                )


def _mode_params(mode: Mode, names: set[str] | None) -> dict[str, Any]:
    """The mode's parameters that apply to a policy declaring `names` (None: all of them)."""
    params = {
        key: value
        for key, value in mode.params.items()
        if key.startswith(SIDES[1:]) or names is None or _bare(key) in names
    }
    if mode.steps_per_query is not None:
        params["eval.steps_per_query"] = mode.steps_per_query
    return params


def _axes_cell(config: GridConfig, mode: Mode, entry: PolicyEntry, family: str, benchmark: str,
               variation: Any, names: set[str] | None) -> Cell:  # fmt: skip
    return Cell(
        mode=mode.name,
        policy=entry,
        family=family,
        variation=variation.name,
        suite=variation.suite or "",  # the suite the eval ran is filled in from its report
        benchmark=benchmark,
        suites=(variation.suite,) if variation.suite else None,
        tasks=variation.tasks or config.tasks,
        seeds=config.seeds,
        trials=config.trials,
        max_steps=config.max_steps,
        timeout_s=config.timeout_s,
        workers=mode.workers or config.workers,
        record=config.record,
        adapter=mode.adapter,
        params=_mode_params(mode, names),
        config_keys=_config_keys(f"families.{family}.variations.{variation.name}", variation.tasks),
    )


def _config_keys(where: str, own_tasks: Any) -> dict[str, str]:
    """Where the cell's suite and tasks come from in the config, to name in an eval's refusal."""
    return {"--suite": f"{where}.suite", "--tasks": f"{where}.tasks" if own_tasks else "tasks"}


def _suite_cell(config: GridConfig, suite: Any) -> Cell:
    params = dict(suite.params)
    if suite.steps_per_query is not None:
        params["eval.steps_per_query"] = suite.steps_per_query
    return Cell(
        mode=suite.mode,
        policy=config.policy(suite.policy),
        family=suite.benchmark,
        variation=suite.name,
        suite=suite.suite or "",
        benchmark=suite.benchmark,
        suites=(suite.suite,) if suite.suite else None,
        tasks=suite.tasks or config.tasks,
        seeds=suite.seeds if suite.seeds is not None else config.seeds,
        trials=suite.trials or config.trials,
        max_steps=config.max_steps,
        timeout_s=config.timeout_s,
        workers=suite.workers or config.workers,
        record=config.record,
        adapter=suite.adapter,
        params=params,
        config_keys=_config_keys(f"suites[{config.suites.index(suite)}]", suite.tasks),
    )


def group(cells: Sequence[Cell]) -> list[EvalGroup]:
    """The evals of `cells`: cells sharing their episodes in one, an arm per distinct setting."""
    groups: dict[tuple, EvalGroup] = {}
    for cell in cells:
        key = cell.eval_key()
        if key not in groups:
            digest = hashlib.sha1(json.dumps(key, default=str).encode()).hexdigest()[:10]
            groups[key] = EvalGroup(f"{_safe(cell.family)}-{_safe(cell.variation)}-{digest}", [], [])
        found = groups[key]
        found.cells.append(cell)
        params = dict(cell.params)
        for arm in found.arms:
            if arm.policy.id == cell.policy.id and arm.params == params:
                arm.cells.append(cell)
                break
        else:
            found.arms.append(Arm("", cell.policy, params, [cell]))
    for found in groups.values():
        for arm in found.arms:
            arm.name = "+".join(dict.fromkeys(c.mode for c in arm.cells)) + "@" + arm.policy.id
    return list(groups.values())


def check_floors(config: GridConfig, cells: Sequence[Cell]) -> None:
    """A floor whose pattern matches no cell of the grid is a typo, not a floor that holds."""
    keys = [cell.key for cell in cells]
    for pattern in config.floors:
        if not any(fnmatch.fnmatchcase(key, pattern) for key in keys):
            shown = ", ".join(keys[:4]) + (f" and {len(keys) - 4} more" if len(keys) > 4 else "")
            raise SeqInputError(
                f"{config.source}: key 'floors.{pattern}': the pattern matches no cell; cells are "
                f"named mode@policy/family/variation ({shown})."
            )


def floor_of(config: GridConfig, cell_key: str) -> float | None:
    """The highest per-cell floor whose pattern matches `cell_key` (`fnmatch`), if any."""
    matched = [rate for pattern, rate in config.floors.items() if fnmatch.fnmatchcase(cell_key, pattern)]
    return max(matched) if matched else None
