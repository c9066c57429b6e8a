"""The run directory: stamped folders under the output dir, what resume reuses, sentinels, videos.

```
OUTPUT_DIR/20261201_174233/
├── grid.json              # the config as run (resume checks it has not changed)
├── versions.json          # NAME@vN each benchmark/policy name resolved to (resume checks them)
├── origin.json            # which config file started it (resume takes that config's runs)
├── summary.json / .tsv
├── aaa_done_flag.txt      # every cell ran
├── evals/<group>.json     # the eval that runs a group of cells (resume continues it)
├── videos/                # hard links, named mode__policy__family__variation__task…
└── <mode>/aaa_done_flag.txt, <mode>/<policy>/<family>/<variation>/cell_result.json
```
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.grid.cells import video_name
from seq.grid.config import GridConfig
from seq.grid.results import CellResult
from seq.record.paths import artifact_file, seq_home

SENTINEL = "aaa_done_flag.txt"
ORIGIN = "origin.json"  # the config that started the run (resume picks this config's runs)
STAMP = re.compile(r"^\d{8}_\d{6}(_\d+)?$")
# Keys that change no measurement: a resume may change them, with a warning.
GATE_KEYS = ("gate_threshold", "floors", "output_dir", "source", "echo")


def new_run_dir(output_dir: Path) -> Path:
    output_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d_%H%M%S")
    path, count = output_dir / stamp, 2
    while path.exists():
        path, count = output_dir / f"{stamp}_{count}", count + 1
    path.mkdir()
    return path


def config_identity(config: GridConfig) -> str:
    """Which config a run belongs to: its file's absolute path (its `source` for one from Python)."""
    path = Path(config.source)
    return str(path.resolve()) if path.is_file() else config.source


def _identity_of(run_dir: Path) -> str | None:
    """The config a run directory was started by (an older run: the source its grid.json names)."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return json.loads((run_dir / ORIGIN).read_text())["config"]
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        source = json.loads((run_dir / "grid.json").read_text())["source"]
        return str(Path(source).resolve()) if Path(source).is_file() else source
    return None


def latest_run_dir(output_dir: Path, identity: str | None = None) -> Path | None:
    """The newest run directory under `output_dir`; with `identity`, the newest of that config
    (two configs may share one output dir)."""
    runs = (
        sorted(p for p in output_dir.glob("*") if p.is_dir() and STAMP.match(p.name))
        if output_dir.is_dir()
        else []
    )
    if identity is not None:
        runs = [p for p in runs if _identity_of(p) == identity]
    return max(runs, key=lambda p: (p.name[:15], int(p.name[16:] or 0))) if runs else None


def config_echo(config: GridConfig) -> dict[str, Any]:
    data = asdict(config)
    data.pop("echo", None)
    return json.loads(json.dumps(data, default=str))


def write_grid(run_dir: Path, config: GridConfig) -> None:
    (run_dir / "grid.json").write_text(json.dumps(config_echo(config), indent=2))
    (run_dir / ORIGIN).write_text(json.dumps({"config": config_identity(config)}))


def check_unchanged(run_dir: Path, config: GridConfig) -> list[str]:
    """Refuse to resume a run whose measured config changed; return the gate-only keys that did."""
    path = run_dir / "grid.json"
    if not path.is_file():
        raise SeqInputError(f"--resume: {run_dir} holds no grid.json; it is not a grid run to resume.")
    try:
        before = json.loads(path.read_text())
    except (OSError, ValueError):
        before = None
    if not isinstance(before, dict):
        raise SeqInputError(
            f"--resume: {path} is damaged (expected the config as run); start a fresh run without --resume."
        )
    now = config_echo(config)
    changed = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    measured = [k for k in changed if k not in GATE_KEYS]
    if measured:
        raise SeqInputError(
            f"--resume: {config.source} changed since run {run_dir} began ({', '.join(measured)}); "
            "restore it, or start a fresh run without --resume."
        )
    return [k for k in changed if k not in ("source", "echo")]


def cell_file(run_dir: Path, cell_path: str) -> Path:
    """Where a cell's result lives: always inside `run_dir` (a cell path has no `.`/`..` step)."""
    parts = Path(cell_path).parts
    if Path(cell_path).is_absolute() or any(part in (".", "..") for part in parts):
        raise ValueError(f"cell path {cell_path!r} is not a folder inside the run directory")
    return run_dir / cell_path / "cell_result.json"


def load_cell(run_dir: Path, cell_path: str) -> CellResult | None:
    """A persisted cell, or None (not run, or its file unreadable: it runs again)."""
    path = cell_file(run_dir, cell_path)
    try:
        return CellResult.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def save_cell(run_dir: Path, cell_path: str, result: CellResult) -> None:
    """Persist a measured cell; an error cell is never persisted, so a resume runs it again."""
    path = cell_file(run_dir, cell_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(result.to_dict(), indent=2))
    temporary.replace(path)


def group_state(run_dir: Path, group_id: str) -> dict[str, Any] | None:
    path = run_dir / "evals" / f"{group_id}.json"
    with contextlib.suppress(OSError, ValueError):
        return json.loads(path.read_text())
    return None


def save_group_state(run_dir: Path, group_id: str, eval_id: str, arms: list[str]) -> None:
    path = run_dir / "evals" / f"{group_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"eval_id": eval_id, "arms": arms}))


def mark_done(folder: Path, what: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SENTINEL).write_text(f"{what} done at {time.strftime('%Y-%m-%d %H:%M:%S')}\n")


def link_videos(run_dir: Path, result: CellResult, episodes: list[Any]) -> int:
    """Hard-link each recorded episode of the cell into `videos/` (a copy across filesystems):
    only files inside the eval's own artifact folder (`seq.record.paths.artifact_file`)."""
    count = 0
    for episode in episodes:
        source = artifact_file(seq_home(), result.eval_id or "", episode.artifacts.get("video"))
        if source is None:
            continue
        success = episode.ok and float(episode.metrics.get("success", 0.0)) >= 0.5
        outcome = "error" if not episode.ok else ("pass" if success else "fail")
        parts = [result.mode, result.policy, result.family, result.variation, episode.task,
                 f"seed{episode.seed}", f"trial{episode.trial}", outcome]  # fmt: skip
        name = video_name(parts)
        target = run_dir / "videos" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        count += 1
    return count
