"""Python twins of `seq deploy` (with its check) and `seq benchmark logs`.

`seq.deploy(FILE)` registers a file's classes as versions (`seq.registry.deploy`), then checks each
benchmark version it registered: one short episode where the benchmark runs (its image, built
now, else here; `seq.engine.checking`). A check that fails keeps the version, marked "failed
check", and raises `CheckFailed` naming why (a module missing from the image, by name); a version
that passed its check before is not checked again.

>>> seq.deploy("my_bench.py")
>>> print(seq.benchmark_logs("my-bench").output)
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from seq.engine.checking import check_version
from seq.errors import SeqInputError
from seq.record.checks import FAILED_CHECK, READY, CheckRow, read_check, write_check
from seq.record.states import VersionKind
from seq.record.store import Store
from seq.registry.deploy import Deployed
from seq.registry.deploy import deploy as register


class CheckFailed(SeqInputError):
    """A deployed benchmark's check failed; `deployed` holds what was registered all the same."""

    def __init__(self, message: str, deployed: list[Deployed]) -> None:
        super().__init__(message)
        self.deployed = deployed


def deploy(target: str | Path, store: Store | None = None, check: bool = True) -> list[Deployed]:
    """Register every `@seq.benchmark`, `@seq.policy` and `@seq.adapter` class in a file (or only
    `FILE:Class`), and check each benchmark version (`check=False`: do not). Each `Deployed` of a
    benchmark carries its `check`; a failed one raises `CheckFailed` once all are registered."""
    store = store or Store()
    deployed = register(target, store)
    failures = []
    for index, item in enumerate(deployed):
        if item.kind != VersionKind.BENCHMARK or not check:
            continue
        done = read_check(store, item.version.name, item.version.version)
        if done is None or done.status != READY:
            done = check_version(item.version)
            write_check(store, done)
        deployed[index] = replace(item, check=done)
        if done.status == FAILED_CHECK:
            failures.append(done.error or f"benchmark {item.version.label}: its check failed.")
    if failures:
        raise CheckFailed(" ".join(failures), deployed)
    return deployed


def benchmark_logs(name: str, version: int | None = None, store: Store | None = None) -> CheckRow:
    """A deployed benchmark version's check (the latest version's by default): what its image
    build and the check printed, what it measured, and why it failed if it did."""
    store = store or Store()
    rows = store.versions("benchmark", name, include_removed=True)
    if not rows:
        raise SeqInputError(f"no deployed benchmark is named {name!r} (seq benchmark ls lists them).")
    live = [row for row in rows if row.removed_at is None] or rows
    row = live[-1] if version is None else next((r for r in rows if r.version == version), None)
    if row is None:
        numbers = ", ".join(f"v{r.version}" for r in rows)
        raise SeqInputError(
            f"--version {version}: benchmark {name!r} has no such version (it has {numbers})."
        )
    found = read_check(store, row.name, row.version)
    if found is None:
        raise SeqInputError(
            f"benchmark {row.label} was not checked (deployed before seq checked benchmarks, or with "
            f"check=False); seq deploy its file again to check it."
        )
    return found
