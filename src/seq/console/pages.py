"""What the console's pages compute beyond a list: reports (kept while their eval is unchanged),
comparisons, an episode's trajectory plots and recording, and the choices of the filters."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from seq.capture.trajectory import read_trajectory
from seq.console.charts import trajectory_plots, trend_plot
from seq.console.queries import OUTCOMES, EvalSummary, RecordReader
from seq.errors import SeqInputError
from seq.record.episode import EpisodeResult
from seq.record.paths import artifact_file
from seq.record.states import EvalStatus
from seq.record.store import Store
from seq.report.charts import Plot
from seq.report.compare import compare_evals
from seq.report.eval_report import Report, build_report
from seq.report.html import Links, html_context, template_environment

CACHED_REPORTS = 32


def episode_href(eval_id: str) -> Any:
    """The link to an episode's page in the console."""

    def href(episode: Any) -> str:
        return f"/evals/{quote(eval_id)}/episode?" + urlencode({"item": episode.item_id})

    return href


def video_href(eval_id: str) -> Any:
    """The link to an episode's recording, served from the record."""

    def href(episode: Any) -> str:
        return f"/evals/{quote(eval_id)}/video?" + urlencode({"item": episode.item_id})

    return href


EPISODE_FIELDS = ("steps", "duration_s")  # metrics the episode page shows as fields of their own


def measured(value: Any) -> str:
    """A recorded value as the episode page shows it: six significant digits (`201.048`, not
    `201.04816803574278`); anything not a number as it is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or (math.isfinite(value) and value == int(value) and abs(value) < 1e15):
        return str(int(value))
    return f"{value:.6g}"


class ConsoleData:
    """The record at `path`, read for the console's pages."""

    outcomes = tuple(OUTCOMES)

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._readers: list[RecordReader] = []
        self._bodies: dict[tuple[Any, ...], tuple[Report, str]] = {}
        self._body = template_environment().get_template("report_body.html")

    # One connection per thread that serves pages (under uvicorn: the event loop's), opened on
    # first use: SQLite connections stay in the thread that made them.
    @property
    def reader(self) -> RecordReader:
        if not hasattr(self._local, "reader"):
            self._local.reader = RecordReader(self.path)
            self._readers.append(self._local.reader)
        return self._local.reader

    @property
    def queries(self) -> int:
        """SQL statements the pages have run so far, in every thread."""
        return sum(reader.queries for reader in self._readers)

    @property
    def store(self) -> Store:
        if not hasattr(self._local, "store"):
            self._local.store = Store(self.path)
        return self._local.store

    def eval_id(self, text: str) -> str:
        """The whole id of the eval `text` names (its id or a unique prefix)."""
        row = self.store.find_eval(text)
        if row is None:
            raise SeqInputError(f"no eval has id {text!r}.")
        return row.id

    def _version(self, eval_id: str) -> tuple[Any, ...]:
        """What changes when an eval's report would: its episodes, scores and status."""
        row = self.reader.execute(
            "SELECT (SELECT COUNT(*) || ':' || COALESCE(MAX(finished_at), 0) FROM episodes "
            "WHERE eval_id = ?), "
            "(SELECT COUNT(*) FROM scores WHERE eval_id = ?), "
            "(SELECT status || ':' || wall_s FROM evals WHERE id = ?)",
            [eval_id, eval_id, eval_id],
        )[0]
        return tuple(row)

    def _remember(self, key: tuple[Any, ...], value: tuple[Report, str]) -> tuple[Report, str]:
        if len(self._bodies) >= CACHED_REPORTS:
            self._bodies.pop(next(iter(self._bodies)))
        self._bodies[key] = value
        return value

    def report(self, eval_id: str) -> Report:
        return build_report(eval_id, self.store)

    def report_body(self, eval_id: str, links: Links) -> tuple[Report, str]:
        """The eval's report and its HTML body, built again only when the eval has changed."""
        key = ("eval", eval_id, *self._version(eval_id))
        if key in self._bodies:
            return self._bodies[key]
        report = self.report(eval_id)
        return self._remember(key, (report, self._body.render(**html_context(report, links, draw=False))))

    def compare_body(self, first: str, second: str, threshold: float) -> tuple[Report, str]:
        a, b = self.eval_id(first), self.eval_id(second)
        key = ("compare", a, b, threshold, *self._version(a), *self._version(b))
        if key in self._bodies:
            return self._bodies[key]
        report = compare_evals(a, b, threshold, self.store)
        owners = {f"A {a}": a, f"B {b}": b}  # a compared episode's arm names its eval

        def episode(e: EpisodeResult) -> str:
            return episode_href(owners[e.arm])(e)

        body = self._body.render(**html_context(report, Links(episode, episode), draw=False))
        return self._remember(key, (report, body))

    def video_file(self, eval_id: str, episode: EpisodeResult) -> Path | None:
        """The episode's mp4 as the record names it, where it is a file inside the eval's
        artifact folder (a record naming any other file is served nothing)."""
        return artifact_file(self.path.parent, eval_id, episode.artifacts.get("video"))

    def trajectory_charts(self, eval_id: str, episode: EpisodeResult) -> tuple[list[Plot], str | None]:
        """The plots of the episode's actions and rewards, or why there are none."""
        path = artifact_file(self.path.parent, eval_id, episode.artifacts.get("trajectory"))
        if path is None:
            if episode.artifacts.get("trajectory"):
                return [], (
                    "its trajectory is not a file inside this eval's folder "
                    f"artifacts/{eval_id} beside the record, so it is not read."
                )
            return [], "no trajectory was recorded for this episode (seq eval run --trajectories)."
        try:
            trajectory = read_trajectory(path)
        except (OSError, ValueError, EOFError) as error:
            return [], f"its trajectory {path} cannot be read: {error}"
        return trajectory_plots(trajectory.actions, trajectory.rewards), None

    def filter_choices(self) -> dict[str, list[str]]:
        """The values each filter of the evals list offers (one query each)."""
        rows = self.reader.execute("SELECT DISTINCT benchmark FROM evals ORDER BY benchmark")
        policies = self.reader.execute(  # every arm's policy, not only the eval's first
            "SELECT DISTINCT policy FROM evals UNION "
            "SELECT DISTINCT json_extract(arm.value, '$.policy_name') "
            "FROM evals, json_each(CASE WHEN json_valid(evals.manifest) THEN evals.manifest "
            "ELSE '{}' END, '$.arms') AS arm ORDER BY 1"  # a manifest with a NaN is not SQLite's JSON
        )
        return {
            "benchmark": [row[0] for row in rows],
            "policy": [row[0] for row in policies if row[0]],
            "status": list(EvalStatus),
        }

    def single_arm_evals(self) -> list[EvalSummary]:
        """The evals a comparison can take (one arm each), newest first."""
        return [e for e in self.reader.evals() if len(e.arms) == 1][:200]

    def trend_chart(self, evals: list[EvalSummary]) -> Plot | None:
        return trend_plot(evals)
