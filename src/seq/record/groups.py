"""The groups every report and every `@seq.score` sees: per arm, all episodes, each suite, each task."""

from __future__ import annotations

from collections.abc import Iterable

from seq.record.episode import EpisodeResult
from seq.record.store import GroupKey


def groups(results: Iterable[EpisodeResult]) -> dict[GroupKey, list[EpisodeResult]]:
    """The report's groups, keyed (arm, kind, name): for each arm in order, all its episodes
    (`overall`), then each suite's, then each task's."""
    results = list(results)
    out: dict[GroupKey, list[EpisodeResult]] = {}
    for arm in dict.fromkeys(r.arm for r in results):
        mine = [r for r in results if r.arm == arm]
        out[(arm, "overall", "all")] = mine
        for result in mine:
            if result.suite is not None:
                out.setdefault((arm, "suite", result.suite), []).append(result)
        for result in mine:
            out.setdefault((arm, "task", result.task), []).append(result)
    return out
