"""Run specs: versioned, immutable YAML that says which rows go where and what is measured.

```yaml
spec: full_v1                 # name and version identify a spec; a released one never changes
version: 1
seeds: [0, 1, 2]              # the algorithm's seeds (learn --seed)
sampling_seed: 0              # independent seed of the spec's stable hash sampling
calibration: ../calibration/v1.json
budget: {learn: {wall_s: …, memory_mb: …, checkpoint_mb: …, examples: …}, infer: {wall_s: …, memory_mb: …}}
selectors: {NAME: {where: {COLUMN: VALUE|[VALUES]}, exclude: {…}, pairs: {control: {…}, stress: {…}},
                   sample: {n: N | fraction: F, by: id|pair_id}, optional: false}}
stages: [{name: main, learn: {from: initial|STAGE, select: [SELECTORS]}, infer: [SELECTORS]}, …]
properties: {NAME: {stage: S, where: {…}, metric: accuracy, reference_bytes: B, privileged: false}}
scaling: {stages: [S1, S2, …], where: {…}}
```

A spec sitting next to a `SHA256SUMS` file that lists it is released: if its bytes changed, loading
it is refused (save the change as a new version instead).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from seq.errors import SeqInputError
from seq.seqbench.budgets import Budget

SELECTABLE = ("id", "family", "split", "condition", "variant", "pair_id")
METRICS = ("accuracy", "exact_match", "choice_accuracy", "target_log_probability", "size_discounted_accuracy")
TOP_KEYS = {
    "spec",
    "version",
    "description",
    "seeds",
    "sampling_seed",
    "calibration",
    "budget",
    "selectors",
    "stages",
    "properties",
    "scaling",
}
INITIAL = "initial"

Where = dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Sample:
    """Stable hash sampling: the first `n` (or `fraction`) keys by sha256(sampling_seed:key)."""

    n: int | None
    fraction: float | None
    by: str


@dataclass(frozen=True)
class Selector:
    name: str
    where: Where
    exclude: Where
    pairs: tuple[Where, Where] | None = None  # (control, stress)
    sample: Sample | None = None
    optional: bool = False  # may select nothing (its task file was not given)


@dataclass(frozen=True)
class Stage:
    """Learn (from the initial checkpoint or an earlier stage's) and then infer; or infer on `model`."""

    name: str
    learn_from: str | None
    learn_select: tuple[str, ...]
    model: str
    infer_select: tuple[str, ...]


@dataclass(frozen=True)
class PropertySpec:
    name: str
    stage: str
    where: Where
    metric: str
    description: str = ""
    reference_bytes: int | None = None
    privileged: bool = False


@dataclass(frozen=True)
class RunSpec:
    name: str
    version: int
    description: str
    seeds: tuple[int, ...]
    sampling_seed: int
    learn_budget: Budget
    infer_budget: Budget
    selectors: dict[str, Selector]
    stages: tuple[Stage, ...]
    properties: dict[str, PropertySpec]
    scaling_stages: tuple[str, ...]
    scaling_where: Where
    calibration: Path | None
    path: Path
    sha256: str
    raw: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)


def _mapping(value: object, where: str) -> dict:
    if not isinstance(value, dict):
        raise SeqInputError(f"{where}: expected a mapping, found {type(value).__name__}.")
    return value


def _names(value: object, where: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise SeqInputError(f"{where}: expected a name or a list of names.")
    return tuple(items)


def parse_where(value: object, where: str) -> Where:
    """`{family: markov, condition: [short, long]}` → column → allowed values."""
    clause: Where = {}
    for column, allowed in _mapping(value or {}, where).items():
        if column not in SELECTABLE:
            raise SeqInputError(f"{where}: unknown column '{column}' (selectable: {', '.join(SELECTABLE)}).")
        values = allowed if isinstance(allowed, list) else [allowed]
        if not values or not all(isinstance(v, (str, int)) for v in values):
            raise SeqInputError(f"{where}.{column}: expected a value or a list of values.")
        clause[column] = tuple(str(v) for v in values)
    return clause


def _selector(name: str, value: object, where: str) -> Selector:
    data = _mapping(value, where)
    unknown = set(data) - {"where", "exclude", "pairs", "sample", "optional"}
    if unknown:
        raise SeqInputError(
            f"{where}: unknown key '{sorted(unknown)[0]}' (known: where, exclude, pairs, sample, optional)."
        )
    if not isinstance(data.get("optional", False), bool):
        raise SeqInputError(f"{where}.optional: expected true or false.")
    pairs = None
    if "pairs" in data:
        pair_data = _mapping(data["pairs"], f"{where}.pairs")
        if set(pair_data) != {"control", "stress"}:
            raise SeqInputError(f"{where}.pairs: expected exactly the keys control and stress.")
        pairs = (
            parse_where(pair_data["control"], f"{where}.pairs.control"),
            parse_where(pair_data["stress"], f"{where}.pairs.stress"),
        )
    sample = None
    if "sample" in data:
        s = _mapping(data["sample"], f"{where}.sample")
        unknown = set(s) - {"n", "fraction", "by"}
        if unknown or ("n" in s) == ("fraction" in s):
            raise SeqInputError(
                f"{where}.sample: expected one of n or fraction, and optionally by (id or pair_id)."
            )
        n, fraction, by = s.get("n"), s.get("fraction"), s.get("by", "pair_id" if pairs else "id")
        if n is not None and (not isinstance(n, int) or n <= 0):
            raise SeqInputError(f"{where}.sample.n: expected a positive integer, found {n!r}.")
        if fraction is not None and not (isinstance(fraction, (int, float)) and 0 < fraction <= 1):
            raise SeqInputError(f"{where}.sample.fraction: expected a number in (0, 1], found {fraction!r}.")
        if by not in ("id", "pair_id"):
            raise SeqInputError(f"{where}.sample.by: expected id or pair_id, found {by!r}.")
        sample = Sample(n, float(fraction) if fraction is not None else None, by)
    return Selector(
        name,
        parse_where(data.get("where"), f"{where}.where"),
        parse_where(data.get("exclude"), f"{where}.exclude"),
        pairs,
        sample,
        data.get("optional", False),
    )


def _stage(value: object, where: str, selectors: dict, earlier: list[str]) -> Stage:
    data = _mapping(value, where)
    unknown = set(data) - {"name", "learn", "infer", "model"}
    if unknown:
        raise SeqInputError(
            f"{where}: unknown key '{sorted(unknown)[0]}' (known: name, learn, infer, model)."
        )
    name = data.get("name")
    if not isinstance(name, str) or not name or name in earlier or name == INITIAL:
        raise SeqInputError(f"{where}.name: expected a new stage name, found {name!r}.")
    learn_from: str | None = None
    learn_select: tuple[str, ...] = ()
    if "learn" in data:
        learn = _mapping(data["learn"], f"{where}.learn")
        if set(learn) - {"from", "select"} or "select" not in learn:
            raise SeqInputError(f"{where}.learn: expected the keys from and select.")
        learn_from = learn.get("from", INITIAL)
        learn_select = _names(learn["select"], f"{where}.learn.select")
        if learn_from != INITIAL and learn_from not in earlier:
            raise SeqInputError(
                f"{where}.learn.from: '{learn_from}' is neither initial nor an earlier stage."
            )
    model = data.get("model", name if learn_from is not None else INITIAL)
    if "model" in data and (learn_from is not None or (model != INITIAL and model not in earlier)):
        raise SeqInputError(
            f"{where}.model: name an earlier stage (or initial), and only in a stage that does not learn."
        )
    infer_select = _names(data.get("infer", []), f"{where}.infer")
    for selector in (*learn_select, *infer_select):
        if selector not in selectors:
            raise SeqInputError(f"{where}: unknown selector '{selector}' (defined: {', '.join(selectors)}).")
    return Stage(name, learn_from, learn_select, model, infer_select)


def _property(name: str, value: object, where: str, stages: list[str]) -> PropertySpec:
    data = _mapping(value, where)
    known = {"stage", "where", "metric", "description", "reference_bytes", "privileged"}
    unknown = set(data) - known
    if unknown:
        raise SeqInputError(
            f"{where}: unknown key '{sorted(unknown)[0]}' (known: {', '.join(sorted(known))})."
        )
    if data.get("stage") not in stages:
        raise SeqInputError(
            f"{where}.stage: expected one of the stages {', '.join(stages)}, found {data.get('stage')!r}."
        )
    metric = data.get("metric", "accuracy")
    if metric not in METRICS:
        raise SeqInputError(f"{where}.metric: expected one of {', '.join(METRICS)}, found {metric!r}.")
    reference = data.get("reference_bytes")
    if metric == "size_discounted_accuracy" and not (isinstance(reference, int) and reference > 0):
        raise SeqInputError(f"{where}.reference_bytes: size_discounted_accuracy needs a positive byte count.")
    return PropertySpec(
        name,
        data["stage"],
        parse_where(data.get("where"), f"{where}.where"),
        metric,
        str(data.get("description", "")),
        reference,
        bool(data.get("privileged", False)),
    )


def check_released(path: Path, digest: str) -> None:
    """Refuse a released spec whose bytes no longer match the digest recorded next to it."""
    sums = path.parent / "SHA256SUMS"
    if not sums.is_file():
        return
    for line in sums.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == path.name and parts[0] != digest:
            raise SeqInputError(
                f"{path}: changed after release (sha256 {digest[:12]}…, released {parts[0][:12]}…); "
                "released specs are immutable, so save the change as a new version."
            )


def load_run_spec(path: Path) -> RunSpec:
    """Read, check and resolve a run spec; every problem names the file and the key."""
    path = Path(path)
    if not path.is_file():
        raise SeqInputError(f"{path}: the run spec does not exist.")
    body = path.read_bytes()
    digest = hashlib.sha256(body).hexdigest()
    check_released(path, digest)
    try:
        raw = yaml.safe_load(body)
    except yaml.YAMLError as error:
        raise SeqInputError(f"{path}: not valid YAML ({str(error).splitlines()[0]}).") from None
    data = _mapping(raw, str(path))
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise SeqInputError(
            f"{path}: unknown key '{sorted(unknown)[0]}' (known: {', '.join(sorted(TOP_KEYS))})."
        )
    for key in ("spec", "version", "seeds", "selectors", "stages"):
        if key not in data:
            raise SeqInputError(f"{path}: missing key '{key}'.")
    if not isinstance(data["version"], int):
        raise SeqInputError(f"{path}: 'version' must be an integer.")
    seeds = data["seeds"]
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) for s in seeds)
        or len(set(seeds)) < len(seeds)
    ):
        raise SeqInputError(f"{path}: 'seeds' must be a non-empty list of distinct integers.")
    sampling_seed = data.get("sampling_seed", 0)
    if not isinstance(sampling_seed, int):
        raise SeqInputError(f"{path}: 'sampling_seed' must be an integer.")
    budget = _mapping(data.get("budget") or {}, f"{path}: budget")
    if set(budget) - {"learn", "infer"}:
        raise SeqInputError(
            f"{path}: budget: unknown key '{sorted(set(budget) - {'learn', 'infer'})[0]}' "
            "(known: learn, infer)."
        )
    selectors = {
        name: _selector(name, value, f"{path}: selectors.{name}")
        for name, value in _mapping(data["selectors"], f"{path}: selectors").items()
    }
    if not isinstance(data["stages"], list) or not data["stages"]:
        raise SeqInputError(f"{path}: 'stages' must be a non-empty list.")
    stages: list[Stage] = []
    for i, value in enumerate(data["stages"]):
        stages.append(_stage(value, f"{path}: stages[{i}]", selectors, [s.name for s in stages]))
    names = [s.name for s in stages]
    properties = {
        name: _property(name, value, f"{path}: properties.{name}", names)
        for name, value in _mapping(data.get("properties") or {}, f"{path}: properties").items()
    }
    scaling = _mapping(data.get("scaling") or {}, f"{path}: scaling")
    scaling_stages = _names(scaling.get("stages", []), f"{path}: scaling.stages")
    for stage in scaling_stages:
        if stage not in names:
            raise SeqInputError(f"{path}: scaling.stages: unknown stage '{stage}'.")
    calibration = data.get("calibration")
    return RunSpec(
        name=str(data["spec"]),
        version=data["version"],
        description=str(data.get("description", "")).strip(),
        seeds=tuple(seeds),
        sampling_seed=sampling_seed,
        learn_budget=Budget.from_spec(budget.get("learn"), f"{path}: budget.learn"),
        infer_budget=Budget.from_spec(budget.get("infer"), f"{path}: budget.infer"),
        selectors=selectors,
        stages=tuple(stages),
        properties=properties,
        scaling_stages=scaling_stages,
        scaling_where=parse_where(scaling.get("where"), f"{path}: scaling.where"),
        calibration=(path.parent / calibration).resolve() if calibration else None,
        path=path.resolve(),
        sha256=digest,
        raw=data,
    )
