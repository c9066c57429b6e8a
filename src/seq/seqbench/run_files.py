"""A run directory on disk: the Parquet predictions table and reading a finished run back.

`calibrate`, `screen` and `report` work from these files only, never from the algorithm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from seq.errors import SeqInputError

RUN_FILES = (
    "manifest.json",
    "predictions.parquet",
    "metrics.json",
    "properties.json",
    "diagnostics.json",
    "resources.json",
    "scaling.json",
    "selection.json",
    "resolved_specs.json",
    "report.md",
    "report.html",
)


def _schema():
    import pyarrow as pa

    text, number = pa.string(), pa.float64()
    return pa.schema(
        [
            ("seed", pa.int64()),
            ("stage", text),
            ("item_id", text),
            ("family", text),
            ("split", text),
            ("condition", text),
            ("variant", text),
            ("pair_id", text),
            ("input", text),
            ("target", text),
            ("output", text),
            ("candidates", pa.list_(text)),
            ("log_probabilities", pa.list_(number)),
            ("exact_match", number),
            ("choice_correct", number),
            ("target_log_probability", number),
            ("target_probability_zero", pa.bool_()),
            ("status", text),
            ("broadcast", pa.bool_()),
            ("source_seed", pa.int64()),
            ("checkpoint_bytes", pa.int64()),
        ]
    )


def write_predictions(path: Path, records: list[dict]) -> None:
    """All prediction records as one Parquet table (`log_probabilities` nulls are probability zero)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema()
    table = pa.Table.from_pylist(records, schema=schema) if records else schema.empty_table()
    pq.write_table(table, path)


def read_predictions_table(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


@dataclass
class RunFiles:
    """A finished run, read back: its spec identity, algorithm, properties and (lazily) predictions."""

    path: Path
    manifest: dict
    spec: dict
    properties: list[dict]
    resolved: dict

    @property
    def algorithm_label(self) -> str:
        algorithm = self.manifest["algorithm"]
        return f"{algorithm['name']}@{algorithm['version']}"

    @property
    def seed_invariant(self) -> bool:
        return bool(self.manifest["algorithm"].get("seed_invariant"))

    def records(self) -> list[dict]:
        return read_predictions_table(self.path / "predictions.parquet")


def _object(path: Path) -> dict:
    """A JSON file holding an object."""
    value = _json(path)
    if not isinstance(value, dict):
        raise SeqInputError(f"{path}: expected a JSON object, found {type(value).__name__}.")
    return value


def _json(path: Path) -> dict | list:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise SeqInputError(f"{path}: not valid JSON ({error.msg}, line {error.lineno}).") from None


def load_run(path: Path) -> RunFiles:
    """Read a finished run directory; a missing file is bad input naming it."""
    path = Path(path)
    if not path.is_dir():
        raise SeqInputError(f"{path}: no such run directory.")
    for name in ("manifest.json", "properties.json", "resolved_specs.json", "predictions.parquet"):
        if not (path / name).is_file():
            raise SeqInputError(f"{path}: not a finished seqbench run ({name} is missing).")
    manifest = _object(path / "manifest.json")
    properties = _object(path / "properties.json")
    resolved = _object(path / "resolved_specs.json")
    return RunFiles(path, manifest, manifest["spec"], properties["properties"], resolved)
