"""What `seq deploy` checks of an adapter, and again when an eval starts.

An adapter file is one file of at most 256 KB that imports only numpy, `seq.tf` (and from `seq`
only `adapter`, `Adapter` and `tf`) and the standard library. Every transform it labels lossless
must pass the round trip of `seq.tf.check` on the samples its `observation_spec` / `action_spec`
declare and on the transforms' own examples — when it is registered, and again when an eval starts
(then also on the benchmark's real observation, see `seq.engine.observation_fit`).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from seq.authoring.adapter import Adapter, AdapterSpec, adapter_spec_of
from seq.authoring.begin import EpisodeStart
from seq.errors import SeqInputError
from seq.tf.base import Transform
from seq.tf.check import check_chain
from seq.tf.spec import parse_spec, synthetic

ATTRIBUTES = ("obs_transforms", "action_transforms", "episode_transforms")
MAX_BYTES = 256 * 1024
SEQ_NAMES = frozenset({"adapter", "Adapter", "tf"})
SAMPLES = 3  # synthetic samples drawn from a declared spec


# -- the file --------------------------------------------------------------------------------------
def _allowed_module(name: str) -> bool:
    top = name.split(".")[0]
    return (
        top == "numpy"
        or name == "seq.tf"
        or name.startswith("seq.tf.")
        or (top != "seq" and top in sys.stdlib_module_names)
    )


def _refuse_import(path: Path | str, line: int, name: str) -> SeqInputError:
    return SeqInputError(
        f"{path}:{line}: an adapter may import only numpy, seq.tf and the standard library, "
        f"and it imports {name!r}."
    )


def check_adapter_source(path: Path | str, data: bytes) -> ast.Module:
    """Refuse a file over 256 KB, or one that imports anything but numpy, `seq.tf` (and `seq` for
    `seq.adapter` / `seq.Adapter` / `seq.tf`) and the standard library, naming the import."""
    if len(data) > MAX_BYTES:
        raise SeqInputError(
            f"{path}: an adapter file is at most 256 KB, and this one is {len(data) / 1024:.0f} KB."
        )
    try:
        tree = ast.parse(data, filename=str(path))
    except SyntaxError as error:
        raise SeqInputError(f"{path}:{error.lineno}: syntax error: {error.msg}.") from None
    seq_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "seq" or (
                    _allowed_module(alias.name) and alias.name.startswith("seq.") and not alias.asname
                ):
                    seq_names.add(alias.asname or "seq")
                elif not _allowed_module(alias.name):
                    raise _refuse_import(path, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                names = ", ".join(alias.name for alias in node.names)
                raise _refuse_import(path, node.lineno, "." * node.level + (module or names))
            if module == "seq":
                for alias in node.names:
                    if alias.name not in SEQ_NAMES:
                        raise _refuse_import(path, node.lineno, f"seq.{alias.name}")
            elif not _allowed_module(module):
                raise _refuse_import(path, node.lineno, module)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in seq_names
            and node.attr not in SEQ_NAMES
        ):
            raise SeqInputError(
                f"{path}:{node.lineno}: an adapter may use only seq.adapter, seq.Adapter and seq.tf, "
                f"and it uses seq.{node.attr}."
            )
    return tree


def declares_adapter(data: bytes) -> bool:
    """Whether a file (that parses) has a class decorated `@seq.adapter` / `@adapter` or based on
    `Adapter`: such a file gets the adapter checks before it is imported."""
    try:
        tree = ast.parse(data)
    except SyntaxError:
        return False

    def named(node: ast.expr, name: str) -> bool:
        node = node.func if isinstance(node, ast.Call) else node
        return (isinstance(node, ast.Attribute) and node.attr == name) or (
            isinstance(node, ast.Name) and node.id == name
        )

    return any(
        isinstance(node, ast.ClassDef)
        and (
            any(named(d, "adapter") for d in node.decorator_list)
            or any(named(b, "Adapter") for b in node.bases)
        )
        for node in ast.walk(tree)
    )


# -- an instance, and its labels -------------------------------------------------------------------
def _transforms(instance: Adapter, attribute: str, where: str) -> list[Transform]:
    value = getattr(instance, attribute, ())
    if not isinstance(value, list | tuple):
        raise SeqInputError(
            f"{where}: {attribute} must be a list of seq.tf transforms, got {type(value).__name__}."
        )
    for index, transform in enumerate(value):
        if not isinstance(transform, Transform):
            raise SeqInputError(
                f"{where}: {attribute}[{index}] ({transform!r}) is not a seq.tf transform; "
                "wrap a function with seq.tf.custom(...)."
            )
    return list(value)


def instantiate(cls: type, parameters: Mapping[str, Any] | None = None, where: str | None = None) -> Adapter:
    """An adapter built with its declared defaults, overridden by `parameters`, its lists validated."""
    spec = adapter_spec_of(cls)
    where = where or f"adapter {spec.name!r}"
    values = {p.name: p.default for p in spec.parameters.values()}
    values.update(parameters or {})
    try:
        instance = cls(**values)
    except SeqInputError as error:
        raise SeqInputError(f"{where}: {error}") from None
    except Exception as error:
        raise SeqInputError(f"{where}: __init__ raised {type(error).__name__}: {error}") from None
    for attribute in ATTRIBUTES:
        _transforms(instance, attribute, where)
    return instance


def describe_transforms(instance: Adapter) -> dict[str, Any]:
    """Every transform with its label, and the lossy ones with their reasons (for show and the report)."""
    out: dict[str, Any] = {attribute: [] for attribute in ATTRIBUTES} | {"lossy": []}
    for attribute in ATTRIBUTES:
        for index, transform in enumerate(getattr(instance, attribute)):
            entry = {"where": f"{attribute}[{index}]", **transform.describe()}
            out[attribute].append(entry)
            if entry["lossy"]:
                out["lossy"].append(entry)
    return out


def check_instance(
    instance: Adapter, where: str, observations: list[Any] | None = None, on: str = ""
) -> list[Any]:
    """Check every lossless label of an adapter: its obs transforms on `observations` (a benchmark's
    real ones, at eval start) and on samples of its `observation_spec`, its action transforms on
    samples of its `action_spec`, each also on its own examples. Returns the observations as the
    policy would see them; refuses the first transform that fails, naming it."""
    rng = np.random.default_rng(0)
    results: list[Any] = []
    episode = EpisodeStart(task="task", suite="suite", instruction="do the task", seed=0, task_index=0)
    for attribute, spec_name, given in (
        ("obs_transforms", "observation_spec", list(observations or [])),
        ("action_transforms", "action_spec", []),
        ("episode_transforms", None, [episode.to_dict()]),
    ):
        declared = getattr(instance, spec_name, None) if spec_name else None
        samples = list(given)
        if declared is not None:
            samples += synthetic(parse_spec(declared, f"{where}: {spec_name}"), rng, SAMPLES)
        outputs, failure = check_chain(_transforms(instance, attribute, where), samples, rng)
        if failure is not None:
            raise SeqInputError(
                f"{where}: {attribute}[{failure.index}] {failure.transform} fails its check{on}: "
                f"{failure.reason}."
            )
        if attribute == "obs_transforms":
            results = outputs[: len(given)]
    return results


def verify_class(cls: type, where: str) -> dict[str, Any]:
    """What `seq deploy` stores with an adapter's version, after checking it with its defaults:
    its declared parameters, every transform and label, and whether it is lossy."""
    spec = adapter_spec_of(cls)
    instance = instantiate(cls, where=where)
    check_instance(instance, where)
    described = describe_transforms(instance)
    return {**spec.describe(), **described, "is_lossy": bool(described["lossy"])}


def adapter_declared(cls: type, spec: AdapterSpec, path: Path | str, data: bytes) -> dict[str, Any]:
    """`seq deploy`'s checks of one adapter class in a file: the file's size and imports, then its labels."""
    check_adapter_source(path, data)
    return verify_class(cls, f"{path}: adapter {spec.name!r}")
