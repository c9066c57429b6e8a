"""`seq eval export`: an eval's record as files: one JSON line per episode, the report as JSON, and
the work items that have not finished (for a partial or sharded eval)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from seq.errors import make_output_folder
from seq.record.store import Store
from seq.report.eval_report import build_report
from seq.report.report_content import finite


def export_eval(eval_id: str, directory: str | Path, store: Store | None = None) -> dict[str, Path]:
    """Write `episodes.jsonl`, `report.json` and `unfinished.json` for an eval into `directory`."""
    store = store or Store()
    report = build_report(eval_id, store)
    eval_id = report.eval_id  # the whole id, when a prefix named it
    out = make_output_folder(directory)
    episodes = out / "episodes.jsonl"
    with episodes.open("w") as handle:
        for episode in report.episodes:
            record = finite({"eval_id": eval_id, **asdict(episode)})
            handle.write(json.dumps(record, allow_nan=False) + "\n")
    aggregate = out / "report.json"
    aggregate.write_text(report.to_json())
    unfinished = out / "unfinished.json"
    unfinished.write_text(
        json.dumps([item.item_id for item in store.items(eval_id, unfinished_only=True)], indent=2)
    )
    return {"episodes": episodes, "report": aggregate, "unfinished": unfinished}
