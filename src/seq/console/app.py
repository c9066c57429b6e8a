"""The console: a read-only web app over the record (Starlette, server-rendered jinja2 pages).

Pages: the evals list (`/`), an eval (`/evals/ID`: its report as `--html` shows it, and its
episodes), an episode (`/evals/ID/episode?item=…`: video, actions and rewards, error), a
comparison of two evals (`/compare?a=…&b=…`), the benchmarks (`/benchmarks`) and one benchmark's
evals over its versions (`/benchmarks/NAME`). It reads the record and the report, never the engine.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Route

from seq.console.hosts import LOOPBACK_HOSTS, HostCheck
from seq.console.pages import EPISODE_FIELDS, ConsoleData, episode_href, measured, video_href
from seq.errors import SeqInputError
from seq.record.paths import seq_home
from seq.record.states import EvalStatus
from seq.record.store import Store
from seq.report.charts import require_plotting, vega_bundle
from seq.report.html import Links, template_environment

PAGE_SIZE = 50
REFRESH_S = 5  # a page showing a running eval reloads itself this often


def create_app(
    record: str | Path | None = None, refresh_s: int = REFRESH_S, hosts: Sequence[str] = LOOPBACK_HOSTS
) -> Starlette:
    """The console's ASGI app over the record at `record` (default: `$SEQ_HOME/seq.db`); a page
    showing a running eval reloads itself every `refresh_s` seconds (0: never). It answers only
    requests for `hosts` (`seq.console.hosts`)."""
    path = Path(record) if record else seq_home() / "seq.db"
    if not path.is_file():
        raise SeqInputError(f"there is no record at {path} (run an eval first, or set SEQ_HOME).")
    Store(path).close()  # a record of an older seq is brought up to date once, before reading it
    data = ConsoleData(path)
    environment = template_environment("seq.console")
    environment.filters["timestamp"] = lambda t: time.strftime("%Y-%m-%d %H:%M", time.localtime(t))
    environment.filters["measured"] = measured

    def page(template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        text = environment.get_template(template).render(**context)
        return HTMLResponse(text, status_code=status_code)

    def not_found(message: str) -> HTMLResponse:
        return page("message.html", 404, title="Not found", message=message)

    async def evals_page(request: Request) -> Response:
        filters = {key: request.query_params.get(key) or "" for key in ("benchmark", "policy", "status")}
        evals = data.reader.evals(**{key: value or None for key, value in filters.items()})
        choices = data.filter_choices()
        running = any(e.status == EvalStatus.RUNNING for e in evals)
        return page(
            "evals.html", evals=evals, filters=filters, choices=choices, refresh=running and refresh_s
        )

    async def eval_page(request: Request) -> Response:
        try:
            eval_id = data.eval_id(request.path_params["eval_id"])
            # a recording links to its episode's page, which plays it beside its row
            report, body = data.report_body(eval_id, Links(episode_href(eval_id), episode_href(eval_id)))
        except SeqInputError as error:
            return not_found(str(error))
        outcome = request.query_params.get("outcome", "all")
        if outcome not in data.outcomes:
            outcome = "all"
        counts = data.reader.outcome_counts(eval_id)
        pages = max(1, math.ceil(counts[outcome] / PAGE_SIZE))
        number = min(max(1, _int(request.query_params.get("page"), 1)), pages)
        episodes = data.reader.episodes(eval_id, outcome, (number - 1) * PAGE_SIZE, PAGE_SIZE)
        return page(
            "eval.html",
            report=report,
            body=body,
            episodes=episodes,
            counts=counts,
            outcome=outcome,
            page=number,
            pages=pages,
            episode_href=episode_href(eval_id),
            refresh=report.status == EvalStatus.RUNNING and refresh_s,
        )

    async def report_json(request: Request) -> Response:
        try:
            report = data.report(data.eval_id(request.path_params["eval_id"]))
        except SeqInputError as error:
            return not_found(str(error))
        return Response(report.to_json(), media_type="application/json")

    async def episode_page(request: Request) -> Response:
        try:
            eval_id = data.eval_id(request.path_params["eval_id"])
        except SeqInputError as error:
            return not_found(str(error))
        item = request.query_params.get("item", "")
        episode = data.reader.episode(eval_id, item)
        if episode is None:
            return not_found(f"eval {eval_id} has no episode of item {item!r}.")
        charts, trajectory_error = data.trajectory_charts(eval_id, episode)
        return page(
            "episode.html",
            eval_id=eval_id,
            episode=episode,
            metrics={k: v for k, v in episode.metrics.items() if k not in EPISODE_FIELDS},
            charts=charts,
            trajectory_error=trajectory_error,
            video=video_href(eval_id)(episode) if data.video_file(eval_id, episode) else None,
        )

    async def video(request: Request) -> Response:
        try:
            eval_id = data.eval_id(request.path_params["eval_id"])
        except SeqInputError as error:
            return not_found(str(error))
        episode = data.reader.episode(eval_id, request.query_params.get("item", ""))
        file = data.video_file(eval_id, episode) if episode else None
        if file is None:
            return not_found("this episode has no recording in the record.")
        return FileResponse(file, media_type="video/mp4")

    async def compare_page(request: Request) -> Response:
        first, second = request.query_params.get("a", ""), request.query_params.get("b", "")
        context: dict[str, Any] = {"a": first, "b": second, "choices": data.single_arm_evals()}
        if first and second:
            try:
                threshold = float(request.query_params.get("threshold") or 0.05)
                report, body = data.compare_body(first, second, threshold)
                context |= {"report": report, "body": body}
            except (SeqInputError, ValueError) as error:
                context["error"] = str(error)
        return page("compare.html", **context)

    async def benchmarks_page(request: Request) -> Response:
        return page("benchmarks.html", benchmarks=data.reader.benchmarks())

    async def benchmark_page(request: Request) -> Response:
        name = request.path_params["name"]
        evals = data.reader.trend(name)
        if not evals:
            return not_found(f"no eval of a benchmark named {name!r} is in the record.")
        return page("benchmark.html", name=name, evals=evals, trend=data.trend_chart(evals))

    async def vega_js(request: Request) -> Response:
        bundle = await run_in_threadpool(vega_bundle)  # built once (seconds), kept by the process
        return Response(bundle, media_type="text/javascript", headers={"Cache-Control": "max-age=86400"})

    routes = [
        Route("/static/vega.js", vega_js),
        Route("/", evals_page),
        Route("/evals/{eval_id}", eval_page),
        Route("/evals/{eval_id}/report.json", report_json),
        Route("/evals/{eval_id}/episode", episode_page),
        Route("/evals/{eval_id}/video", video),
        Route("/compare", compare_page),
        Route("/benchmarks", benchmarks_page),
        Route("/benchmarks/{name}", benchmark_page),
    ]
    threading.Thread(target=_warm, name="seq-console-warm", daemon=True).start()
    app = Starlette(routes=routes, middleware=[Middleware(HostCheck, hosts=hosts)])
    app.state.data = data
    return app


def _warm() -> None:
    """What the first page with plots would wait for: altair imported, the vega script bundled."""
    require_plotting()
    vega_bundle()


def _int(text: str | None, default: int) -> int:
    try:
        return int(text or default)
    except ValueError:
        return default
