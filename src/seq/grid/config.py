"""A grid config: YAML on disk, the same dataclasses in Python.

Two shapes. The axes shape sweeps `modes × families/variations × policies`; the suites
shape lists hand-curated cells. Every key is checked: an unknown one, a config of neither shape or
of both, or `base:` inheritance is refused in one sentence naming the key and the file (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.grid.keys import Keys, as_list, checked, name_of, typed
from seq.record.states import PolicyProtocol

DEFAULT_GATE_THRESHOLD = 0.90
DEFAULT_OUTPUT_DIR = "grid_runs"
MAX_EPISODES = 10**6  # trials, seeds, and tasks × seeds × trials of one cell
INT_LIMIT = 2**31  # seeds, max_steps, workers, steps_per_query: what the record stores as int32


@dataclass(frozen=True)
class Variation:
    """One column of the grid: a suite of the family's benchmark and/or a group of its tasks."""

    name: str
    suite: str | None = None
    tasks: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Family:
    """A benchmark and the variations of it the grid runs."""

    name: str
    benchmark: str
    variations: tuple[Variation, ...]


@dataclass(frozen=True)
class PolicyEntry:
    """A policy of the grid under its id: a registered name (`name@vN`), a server already running
    (`url`), or a managed server `seq` starts with `start_cmd`, waits for on `/health` and stops."""

    id: str
    policy: str | None = None
    url: str | None = None
    protocol: str = "seq"
    start_cmd: str | None = None
    startup_timeout_s: float = 120.0

    @property
    def served(self) -> bool:
        return self.url is not None


@dataclass(frozen=True)
class Mode:
    """How the actions are produced: named arm settings applied to every policy of the grid."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    adapter: str | None = None
    steps_per_query: int | None = None
    workers: int | None = None
    policies: tuple[str, ...] | None = None  # only these policy ids (default: all)


@dataclass(frozen=True)
class SuiteCell:
    """One hand-curated cell of the suites shape."""

    name: str
    benchmark: str
    policy: str
    mode: str = "default"
    params: Mapping[str, Any] = field(default_factory=dict)
    suite: str | None = None
    tasks: tuple[str, ...] | None = None
    seeds: tuple[int, ...] | None = None
    trials: int | None = None
    workers: int | None = None
    adapter: str | None = None
    steps_per_query: int | None = None


@dataclass(frozen=True)
class GridConfig:
    """A grid: what to run, how, and the gate. `source` names the file (for messages)."""

    policies: tuple[PolicyEntry, ...] = ()
    families: tuple[Family, ...] = ()
    modes: tuple[Mode, ...] = ()
    suites: tuple[SuiteCell, ...] = ()
    tasks: tuple[str, ...] | None = None  # where a variation or suite cell names none
    seeds: tuple[int, ...] | None = None
    trials: int = 1
    max_steps: int | None = None
    timeout_s: float | None = None
    workers: int | None = None
    record: str | None = None
    gate_threshold: float = DEFAULT_GATE_THRESHOLD
    floors: Mapping[str, float] = field(default_factory=dict)
    output_dir: str = DEFAULT_OUTPUT_DIR
    source: str = "<python>"
    echo: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def shape(self) -> str:
        return "suites" if self.suites else "grid"

    def policy(self, policy_id: str) -> PolicyEntry:
        """The entry of `policy_id`, or a plain registered name when the grid lists none by that id."""
        for entry in self.policies:
            if entry.id == policy_id:
                return entry
        return PolicyEntry(policy_id, policy_id)

    @classmethod
    def from_yaml(cls, path: str | Path) -> GridConfig:
        """Read and check a YAML grid config."""
        from seq.grid.yamlfile import read_yaml

        path = Path(path)
        if not path.is_file():
            raise SeqInputError(f"{path}: no such grid config (expected a YAML file).")
        data = read_yaml(path)
        config = cls.from_dict(data, str(path))
        if not Path(config.output_dir).is_absolute():  # relative to the config file
            config = _with_output_dir(config, str(path.parent / config.output_dir))
        return config

    @classmethod
    def from_dict(cls, data: Any, source: str = "<python>") -> GridConfig:
        """Check a grid config given as plain data (what the YAML holds)."""
        return parse(data, source)


def _with_output_dir(config: GridConfig, output_dir: str) -> GridConfig:
    from dataclasses import replace

    return replace(config, output_dir=output_dir)


TOP = Keys(
    "policies families modes suites tasks seeds trials max_steps timeout_s workers record "
    "gate_threshold floors output_dir"
)
FAMILY = Keys("benchmark variations")
VARIATION = Keys("suite tasks")
POLICY = Keys("id policy url protocol start_cmd startup_timeout_s")
MODE = Keys("params adapter steps_per_query workers policies")
SUITE = Keys("name benchmark policy mode params suite tasks seeds trials workers adapter steps_per_query")
RECORDS = ("all", "first", "none")


def parse(data: Any, source: str) -> GridConfig:
    """The `GridConfig` of plain data; every error names `source` and the key."""
    if not isinstance(data, Mapping):
        raise SeqInputError(f"{source}: a grid config is a mapping of keys (families:, modes:, …).")
    if "base" in data:
        raise SeqInputError(
            f"{source}: key 'base': inheritance is not supported; a grid config is standalone."
        )
    checked(data, TOP, "", source)
    has_axes, has_suites = "families" in data, "suites" in data
    if has_axes == has_suites:
        which = "both" if has_axes else "neither"
        raise SeqInputError(
            f"{source}: has {which} of 'families' (the axes shape) and 'suites' (hand-curated "
            "cells); give exactly one."
        )
    policies = tuple(
        _policy(item, f"policies[{i}]", source)
        for i, item in enumerate(as_list(data.get("policies") or [], "policies", source))
    )
    ids = [p.id for p in policies]
    if len(set(ids)) != len(ids):
        raise SeqInputError(f"{source}: key 'policies': two entries have the id {_dup(ids)!r}.")
    common = _common(data, source)
    if has_axes:
        if not policies:
            raise SeqInputError(f"{source}: key 'policies': the axes shape needs at least one policy.")
        families = _families(data["families"], source)
        modes = _modes(data.get("modes"), ids, source)
        for family in families:
            for variation in family.variations:
                _check_episodes(variation.tasks or common["tasks"], common["seeds"], common["trials"],
                                f"families.{family.name}.variations.{variation.name}", source)  # fmt: skip
        return GridConfig(policies=policies, families=families, modes=modes, source=source,
                          echo=dict(data), **common)  # fmt: skip
    suites = tuple(
        _suite(item, f"suites[{i}]", source)
        for i, item in enumerate(as_list(data["suites"], "suites", source))
    )
    if not suites:
        raise SeqInputError(f"{source}: key 'suites': the list is empty; give at least one cell.")
    for i, suite in enumerate(suites):
        _check_episodes(suite.tasks or common["tasks"], suite.seeds or common["seeds"],
                        suite.trials or common["trials"], f"suites[{i}]", source)  # fmt: skip
    names = [s.name for s in suites]
    if len(set(names)) != len(names):
        raise SeqInputError(f"{source}: key 'suites': two cells are named {_dup(names)!r}.")
    return GridConfig(policies=policies, suites=suites, source=source, echo=dict(data), **common)


def _check_episodes(tasks: Any, seeds: Any, trials: int, where: str, source: str) -> None:
    """A cell's tasks × seeds × trials (where the config names them) is at most MAX_EPISODES."""
    episodes = len(tasks or (0,)) * len(seeds or (0,)) * trials
    if episodes > MAX_EPISODES:
        raise SeqInputError(
            f"{source}: key {where!r}: tasks × seeds × trials make {episodes:,} episodes per cell; "
            f"at most {MAX_EPISODES:,}."
        )


def _valid_url(url: str) -> bool:
    """A ws:// or wss:// URL with a host and, where given, a port from 1 to 65535."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # `ws://[::1`, a port out of range or not a number
        return False
    return parts.scheme in ("ws", "wss") and bool(parts.hostname) and port != 0


def _dup(values: list[str]) -> str:
    return next(v for v in values if values.count(v) > 1)


def _common(data: Mapping[str, Any], source: str) -> dict[str, Any]:
    record = typed(data, "record", str, "", source)
    if record is not None and record not in RECORDS:
        raise SeqInputError(f"{source}: key 'record': expected one of {', '.join(RECORDS)}, got {record!r}.")
    threshold = typed(data, "gate_threshold", float, "", source)
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise SeqInputError(f"{source}: key 'gate_threshold': expected a rate in [0, 1], got {threshold}.")
    floors = data.get("floors") or {}
    if not isinstance(floors, Mapping):
        raise SeqInputError(
            f"{source}: key 'floors': expected CELL_PATTERN: RATE pairs, such as 'clean@*/*/*': 0.8."
        )
    for pattern, rate in floors.items():
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise SeqInputError(f"{source}: key 'floors.{pattern}': expected a rate in [0, 1], got {rate!r}.")
    return {
        "tasks": _tasks(data.get("tasks"), "tasks", source),
        "seeds": _seeds(data.get("seeds"), "seeds", source),
        "trials": typed(data, "trials", int, "", source, positive=True, below=MAX_EPISODES + 1) or 1,
        "max_steps": typed(data, "max_steps", int, "", source, positive=True, below=INT_LIMIT),
        "timeout_s": typed(data, "timeout_s", float, "", source, positive=True),
        "workers": typed(data, "workers", int, "", source, positive=True, below=INT_LIMIT),
        "record": record,
        "gate_threshold": DEFAULT_GATE_THRESHOLD if threshold is None else threshold,
        "floors": {str(k): float(v) for k, v in floors.items()},
        "output_dir": typed(data, "output_dir", str, "", source) or DEFAULT_OUTPUT_DIR,
    }


def _seeds(value: Any, key: str, source: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):  # `seeds: 3` → seeds 0, 1, 2
        if not 1 <= value <= MAX_EPISODES:
            raise SeqInputError(
                f"{source}: key {key!r}: expected a count of seeds from 1 to {MAX_EPISODES:,} or a "
                f"list of seeds, got {value!r}."
            )
        return tuple(range(value))
    items = as_list(value, key, source)
    if not items or not all(isinstance(s, int) and not isinstance(s, bool) for s in items):
        raise SeqInputError(f"{source}: key {key!r}: expected a list of integer seeds, such as [0, 1].")
    if len(items) > MAX_EPISODES:
        raise SeqInputError(f"{source}: key {key!r}: at most {MAX_EPISODES:,} seeds, got {len(items):,}.")
    wrong = next((s for s in items if not 0 <= s < INT_LIMIT), None)
    if wrong is not None:
        raise SeqInputError(f"{source}: key {key!r}: a seed is from 0 to {INT_LIMIT - 1:,}, got {wrong!r}.")
    return tuple(items)


def _tasks(value: Any, key: str, source: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = as_list(value, key, source)
    if not items or not all(isinstance(t, str) for t in items):
        raise SeqInputError(f"{source}: key {key!r}: expected a list of task names.")
    return tuple(items)


def _families(value: Any, source: str) -> tuple[Family, ...]:
    if not isinstance(value, Mapping) or not value:
        raise SeqInputError(
            f"{source}: key 'families': expected a mapping of family names to their benchmark and variations."
        )
    families = []
    for name, body in value.items():
        where = f"families.{name}"
        name = name_of(name, "families", source)
        body = {} if body is None else body
        checked(body, FAMILY, where, source)
        variations = body.get("variations")
        if variations is None:
            parsed: tuple[Variation, ...] = (Variation("default"),)
        elif isinstance(variations, list):  # a list of suite names
            if not all(isinstance(v, str) for v in variations):
                raise SeqInputError(f"{source}: key '{where}.variations': expected suite names.")
            parsed = tuple(Variation(name_of(v, f"{where}.variations", source), suite=v) for v in variations)
        elif isinstance(variations, Mapping):
            parsed = tuple(
                _variation(str(k), v, f"{where}.variations.{k}", source) for k, v in variations.items()
            )
        else:
            raise SeqInputError(
                f"{source}: key '{where}.variations': expected a list of suites or a mapping of "
                "variation names to suite/tasks."
            )
        if not parsed:
            raise SeqInputError(f"{source}: key '{where}.variations': give at least one variation.")
        benchmark = typed(body, "benchmark", str, where, source) or str(name)
        families.append(Family(str(name), benchmark, parsed))
    return tuple(families)


def _variation(name: str, body: Any, where: str, source: str) -> Variation:
    name_of(name, where.removesuffix(f".{name}"), source)
    body = {} if body is None else body
    checked(body, VARIATION, where, source)
    return Variation(
        name, typed(body, "suite", str, where, source), _tasks(body.get("tasks"), f"{where}.tasks", source)
    )


def _policy(item: Any, where: str, source: str) -> PolicyEntry:
    if isinstance(item, str):
        return PolicyEntry(name_of(item, where, source), item)
    checked(item, POLICY, where, source)
    url, start = typed(item, "url", str, where, source), typed(item, "start_cmd", str, where, source)
    name = typed(item, "policy", str, where, source)
    policy_id = typed(item, "id", str, where, source) or name
    if policy_id is None:
        raise SeqInputError(f"{source}: key '{where}.id': a policy entry needs an id (or a policy name).")
    name_of(policy_id, f"{where}.id", source)
    if url is None and name is None:
        raise SeqInputError(f"{source}: key '{where}': give a registered policy name or a url.")
    if start is not None and url is None:
        raise SeqInputError(
            f"{source}: key '{where}.start_cmd': a managed server needs the url it serves at."
        )
    if url is not None and not _valid_url(url):
        raise SeqInputError(f"{source}: key '{where}.url': expected ws://HOST:PORT, got {url!r}.")
    protocol = typed(item, "protocol", str, where, source) or PolicyProtocol.SEQ
    if protocol not in tuple(PolicyProtocol):
        raise SeqInputError(
            f"{source}: key '{where}.protocol': expected one of {', '.join(PolicyProtocol)}."
        )
    timeout = typed(item, "startup_timeout_s", float, where, source, positive=True)
    if timeout is not None and timeout > 7 * 24 * 3600:  # beyond what time.sleep and deadlines take
        raise SeqInputError(
            f"{source}: key '{where}.startup_timeout_s': at most a week (604800 s), got {timeout:g}."
        )
    return PolicyEntry(policy_id, name, url, protocol, start, 120.0 if timeout is None else timeout)


def _modes(value: Any, policy_ids: list[str], source: str) -> tuple[Mode, ...]:
    if value is None:
        return (Mode("default"),)
    if not isinstance(value, Mapping) or not value:
        raise SeqInputError(f"{source}: key 'modes': expected a mapping of mode names to their settings.")
    modes = []
    for name, body in value.items():
        where = f"modes.{name}"
        name_of(name, "modes", source)
        body = {} if body is None else body
        checked(body, MODE, where, source)
        params = body.get("params") or {}
        if not isinstance(params, Mapping):
            raise SeqInputError(f"{source}: key '{where}.params': expected NAME: VALUE pairs.")
        only = _tasks(body.get("policies"), f"{where}.policies", source)
        for policy_id in only or ():
            if policy_id not in policy_ids:
                raise SeqInputError(
                    f"{source}: key '{where}.policies': {policy_id!r} is not a policy of the grid "
                    f"({', '.join(policy_ids)})."
                )
        modes.append(
            Mode(
                str(name),
                dict(params),
                typed(body, "adapter", str, where, source),
                typed(body, "steps_per_query", int, where, source, positive=True, below=INT_LIMIT),
                typed(body, "workers", int, where, source, positive=True, below=INT_LIMIT),
                only,
            )
        )
    return tuple(modes)


def _suite(item: Any, where: str, source: str) -> SuiteCell:
    checked(item, SUITE, where, source)
    for required in ("name", "benchmark", "policy"):
        if item.get(required) is None:
            raise SeqInputError(f"{source}: key '{where}.{required}' is missing; every suite cell needs it.")
    params = item.get("params") or {}
    if not isinstance(params, Mapping):
        raise SeqInputError(f"{source}: key '{where}.params': expected NAME: VALUE pairs.")
    return SuiteCell(
        name=name_of(item["name"], f"{where}.name", source),
        benchmark=typed(item, "benchmark", str, where, source),
        policy=typed(item, "policy", str, where, source),
        mode=name_of(typed(item, "mode", str, where, source) or "default", f"{where}.mode", source),
        params=dict(params),
        suite=typed(item, "suite", str, where, source),
        tasks=_tasks(item.get("tasks"), f"{where}.tasks", source),
        seeds=_seeds(item.get("seeds"), f"{where}.seeds", source),
        trials=typed(item, "trials", int, where, source, positive=True, below=MAX_EPISODES + 1),
        workers=typed(item, "workers", int, where, source, positive=True, below=INT_LIMIT),
        adapter=typed(item, "adapter", str, where, source),
        steps_per_query=typed(
            item, "steps_per_query", int, where, source, positive=True, below=INT_LIMIT
        ),  # fmt: skip
    )
