"""`seq deploy FILE[:Class]`: register the benchmarks and policies a file defines, as versions."""

from __future__ import annotations

import difflib
import hashlib
import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seq.authoring.adapter import AdapterSpec
from seq.authoring.benchmark import SPEC_ATTRIBUTE as BENCHMARK_SPEC
from seq.authoring.benchmark import BenchmarkSpec
from seq.authoring.callable_policy import CallablePolicy
from seq.authoring.policy import Policy, PolicySpec
from seq.errors import SeqInputError
from seq.record.checks import CheckRow
from seq.record.paths import seq_home
from seq.record.states import VersionKind
from seq.record.store import Store, VersionRow
from seq.registry.adapter_checks import adapter_declared, check_adapter_source, declares_adapter
from seq.registry.builtins import BUILTIN_ADAPTERS, BUILTINS, builtin_adapter_file
from seq.registry.content import content_sha256
from seq.registry.loader import IN_MEMORY, check_syntax, import_user_file, load_class, module_name_for


@dataclass(frozen=True)
class Deployed:
    """One registered version and whether this deploy created it, with notes for the user and,
    for a benchmark that `seq.deploy` checked, its check."""

    kind: str
    version: VersionRow
    created: bool
    notes: tuple[str, ...] = ()
    check: CheckRow | None = None

    def __str__(self) -> str:
        return self.version.label


def kind_and_spec(cls: type) -> tuple[VersionKind, BenchmarkSpec | PolicySpec | AdapterSpec] | None:
    spec = cls.__dict__.get(BENCHMARK_SPEC)
    if isinstance(spec, BenchmarkSpec):
        return VersionKind.BENCHMARK, spec
    if isinstance(spec, PolicySpec):
        return VersionKind.POLICY, spec
    if isinstance(spec, AdapterSpec):
        return VersionKind.ADAPTER, spec
    return None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _import_user_file(path: Path, data: bytes) -> tuple[Any, Path, str]:
    check_syntax(path, data)  # before the file is kept by hash
    sha = _sha256(data)
    stored = seq_home() / "code" / f"{sha}.py"
    if not stored.exists():
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_bytes(data)
    return import_user_file(path, data, stored, module_name_for(sha)), stored, sha


def _notes(spec: BenchmarkSpec | PolicySpec | AdapterSpec) -> tuple[str, ...]:
    """What an eval of this benchmark still needs here: a volume not put yet, a secret not set."""
    if not isinstance(spec, BenchmarkSpec):
        return ()
    from seq.isolation.secrets import secret_environment
    from seq.isolation.volumes import current_volume

    needs = []
    if spec.declared.get("assets"):
        try:
            current_volume(spec.declared["assets"]["volume"])
        except SeqInputError as error:
            needs.append(str(error))
    for entry in spec.declared.get("secrets") or []:
        try:
            secret_environment([entry["secret"]])
        except SeqInputError as error:
            needs.append(str(error))
    return tuple(needs)


def deploy(target: str | Path, store: Store | None = None) -> list[Deployed]:
    """Register every `@seq.benchmark`, `@seq.policy` and `@seq.adapter` class in a file (or only
    `FILE:Class`).

    The version is the content of what the class runs (`seq.registry.content`): its own source and
    the module's code other than the file's other registered classes. The same code is the same
    version, a change the next number, and numbers are never reused, also after `seq benchmark rm`.
    """
    text = str(target)
    path_text, _, class_name = text.partition(":") if not Path(text).exists() else (text, "", "")
    path = Path(path_text)
    if not path.is_file():
        raise SeqInputError(f"{path}: no such file to deploy.")
    data = path.read_bytes()
    if declares_adapter(data):  # size and imports are refused before the file runs
        check_adapter_source(path, data)
    module, stored, sha = _import_user_file(path, data)
    found = {
        name: value
        for name, value in vars(module).items()
        if inspect.isclass(value) and value.__module__ == module.__name__ and kind_and_spec(value)
    }
    registered = {cls.__name__ for cls in found.values()}
    source = data.decode(errors="replace")
    if class_name:
        if class_name not in found:
            close = difflib.get_close_matches(class_name, list(found), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else f" It defines: {', '.join(found) or 'none'}."
            raise SeqInputError(
                f"{path}: no @seq.benchmark, @seq.policy or @seq.adapter class named {class_name!r}.{hint}"
            )
        found = {class_name: found[class_name]}
    if not found:
        raise SeqInputError(
            f"{path}: defines no class decorated with @seq.benchmark, @seq.policy or @seq.adapter."
        )
    store = store or Store()
    deployed = []
    for qualname, cls in found.items():
        kind, spec = kind_and_spec(cls)  # type: ignore[misc]
        builtin_file = kind == "adapter" and spec.name in BUILTIN_ADAPTERS
        if spec.name in BUILTINS.get(kind, {}) or (
            builtin_file and path.resolve() != builtin_adapter_file(spec.name).resolve()
        ):
            raise SeqInputError(
                f"{path}: {spec.name!r} is the name of a built-in {kind}; choose another name."
            )
        ref = {
            "path": str(stored),
            "sha256": sha,
            "qualname": qualname,
            "origin_dir": str(path.parent.resolve()),
            "file": str(path),
        }
        if isinstance(spec, AdapterSpec):  # an adapter is its one file, pulled back as it was registered
            declared, content = adapter_declared(cls, spec, path, data), sha
        else:
            declared, content = spec.describe(), content_sha256(source, cls.__name__, registered)
        row, created = _same_file(store, kind, spec.name, ref) or store.register_version(
            kind, spec.name, content, ref, declared
        )
        deployed.append(Deployed(kind, row, created, _notes(spec)))
    return deployed


def _same_file(store: Store, kind: str, name: str, ref: dict[str, Any]) -> tuple[VersionRow, bool] | None:
    """The live version registered from this very file and class, if any (a record whose versions
    hashed whole files stays on them until the class's code changes)."""
    for row in reversed(store.versions(kind, name)):
        if row.ref.get("sha256") == ref["sha256"] and row.ref.get("qualname") == ref["qualname"]:
            return row, False
    return None


def register_builtin(kind: str, name: str, store: Store) -> VersionRow:
    """The version of a built-in benchmark or policy: its module's content, registered on first use."""
    module_name, qualname = BUILTINS[kind][name]
    module = importlib.import_module(module_name)
    source = Path(inspect.getfile(module)).read_text()
    cls = getattr(module, qualname)
    _, spec = kind_and_spec(cls)  # type: ignore[misc]
    ref = {"module": module_name, "qualname": qualname}
    registered = {
        value.__name__
        for value in vars(module).values()
        if inspect.isclass(value) and value.__module__ == module_name and kind_and_spec(value)
    }
    content = content_sha256(source, cls.__name__, registered)
    row, _ = store.register_version(kind, name, content, ref, spec.describe())
    return row


def resolve(kind: str, target: Any, store: Store) -> VersionRow:
    """The version an eval runs: a name (latest version), `name@vN`, a built-in name, or a class."""
    if inspect.isclass(target):
        return _register_class(kind, target, store)
    if kind == VersionKind.POLICY and isinstance(target, Policy):
        return _register_instance(target, store)
    text = str(target)
    name, _, version_text = text.partition("@")
    if name in BUILTINS[kind] and not version_text:
        return register_builtin(kind, name, store)
    if version_text:
        if not (version_text.startswith("v") and version_text[1:].isdigit()):
            raise SeqInputError(f"{kind} {text!r}: a version is written NAME@vN, such as {name}@v1.")
        row = store.version(kind, name, int(version_text[1:]))
        if row is None or row.removed_at is not None:
            raise SeqInputError(f"{kind} {text!r}: no such version is registered.")
        return row
    rows = store.versions(kind, name)
    if rows:
        return rows[-1]
    known = sorted(set(BUILTINS[kind]) | {row.name for row in store.versions(kind)})
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else f" Known: {', '.join(known)}."
    raise SeqInputError(f"unknown {kind} {name!r}.{hint}")


def _register_instance(policy: Policy, store: Store) -> VersionRow:
    """The version of a policy object's class (its source), for an object in the caller's memory (a
    model being trained), which only the caller's process can run (see `seq.evaluate`)."""
    cls = type(policy)
    found = kind_and_spec(cls)
    if found is None or found[0] != VersionKind.POLICY:
        raise SeqInputError(f"{cls.__name__} is not decorated with @seq.policy.")
    try:  # a function wrapped as a policy is versioned by its own source
        source = policy.source if isinstance(policy, CallablePolicy) else inspect.getsource(cls).encode()
    except (OSError, TypeError):
        source = cls.__qualname__.encode()
    ref = {"in_memory": "", "qualname": cls.__qualname__}
    row, _ = store.register_version("policy", found[1].name, _sha256(source), ref, found[1].describe())
    return row


def remember_instance(policy: Policy) -> str:
    """Keep a reference to a policy object for this process's evals; the key goes in the eval."""
    key = f"{type(policy).__qualname__}-{id(policy):x}"
    IN_MEMORY[key] = policy
    return key


def _register_class(kind: str, cls: type, store: Store) -> VersionRow:
    found = kind_and_spec(cls)
    if found is None or found[0] != kind:
        raise SeqInputError(f"{cls.__name__} is not decorated with @seq.{kind}.")
    for name, (module_name, qualname) in BUILTINS[kind].items():
        if cls.__module__ == module_name and cls.__qualname__ == qualname:
            return register_builtin(kind, name, store)
    source = inspect.getsourcefile(cls)
    if source is None:
        raise SeqInputError(f"{cls.__name__}: its source file cannot be found; define it in a .py file.")
    (deployed,) = deploy(f"{source}:{cls.__qualname__}", store)
    return deployed.version


def load_version(row: VersionRow) -> type:
    return load_class(row.ref, f"{row.kind} {row.label}")
