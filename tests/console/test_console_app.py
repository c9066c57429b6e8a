"""The console's pages served in process (Starlette's test client): what they show, what they
refuse, and that a list costs the same few queries however many evals the record holds."""

from __future__ import annotations

import math
import signal
import socket
import subprocess
import sys

import pytest
from conftest import default_ctrl_c, refused_in_one_line, run_cli
from console_records import RUNNING_ID, running_eval

import seq
from seq.record.store import Store

pytest.importorskip("starlette")
pytest.importorskip("vl_convert")
from starlette.testclient import TestClient  # noqa: E402


@pytest.fixture
def client(toy_file):
    seq.deploy(toy_file)
    seq.eval.run("line-controller", benchmark="line", envs=2)
    store = Store()
    lease = running_eval(store, done=3, total=8)
    app = seq.console.create_app(store.path)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        yield client
    lease.release()
    store.close()


def test_an_eval_page_filters_and_pages_its_episodes(client):
    page = client.get(f"/evals/{RUNNING_ID}")
    assert page.status_code == 200
    assert ">success (2)</a>" in page.text and ">fail (1)</a>" in page.text and ">error (0)</a>" in page.text
    assert page.text.count('class="episode-link"') == 3
    failed = client.get(f"/evals/{RUNNING_ID}?outcome=fail")
    assert failed.text.count('class="episode-link"') == 1
    assert "page 1 of 1" in client.get(f"/evals/{RUNNING_ID}?outcome=error&page=9").text
    assert client.get(f"/evals/{RUNNING_ID}/report.json").json()["done"] == 3
    assert client.get(f"/evals/{RUNNING_ID[:10]}").status_code == 200  # a unique prefix names it


def test_what_is_not_in_the_record_is_a_404_in_words(client):
    missing = client.get("/evals/ev-nothing")
    assert missing.status_code == 404 and "no eval has id &#39;ev-nothing&#39;" in missing.text
    episode = client.get(f"/evals/{RUNNING_ID}/episode", params={"item": "near|seed=99"})
    assert episode.status_code == 404 and "has no episode of item" in episode.text
    unrecorded = client.get(f"/evals/{RUNNING_ID}/video", params={"item": "far|seed=3"})
    assert unrecorded.status_code == 404
    assert client.get("/benchmarks/nothing").status_code == 404
    compared = client.get("/compare", params={"a": RUNNING_ID, "b": "ev-nothing"})
    assert "no eval has id" in compared.text


def test_a_recording_is_served_from_the_record(client):
    video = client.get(f"/evals/{RUNNING_ID}/video", params={"item": "near|seed=0"})
    assert video.status_code == 200 and video.headers["content-type"] == "video/mp4"
    assert video.content[4:8] == b"ftyp"  # an mp4
    part = client.get(
        f"/evals/{RUNNING_ID}/video", params={"item": "near|seed=0"}, headers={"Range": "bytes=0-99"}
    )
    assert part.status_code == 206 and len(part.content) == 100  # a browser can seek


def test_the_evals_list_costs_the_same_queries_for_more_evals(client, toy_file):
    data = client.app.state.data
    before = data.queries
    client.get("/")
    few = data.queries - before  # the record's tallies computed
    for noise in ("0.1", "0.2", "0.4"):
        seq.eval.run("line-controller", benchmark="line", envs=2, params={"noise": noise})
    before = data.queries
    page = client.get("/")  # new episodes: computed again
    assert 0 < few <= 8 and data.queries - before == few  # not one more per eval: no N+1
    assert page.text.count("<tr data-eval=") == 5
    before = data.queries
    client.get("/")
    assert data.queries - before < few  # nothing changed: the tallies are kept


def test_seq_ui_refuses_a_missing_record_and_a_taken_port(tmp_path, toy_file):
    refused_in_one_line(run_cli("ui", "--record", str(tmp_path / "none.db")), "there is no record at")
    seq.deploy(toy_file)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        refused_in_one_line(run_cli("ui", "--port", str(port)), f"--port {port}", "is taken")
    refused_in_one_line(run_cli("ui", "--refresh", "-1"), "--refresh -1", "from 0 (never)")


def test_seq_ui_stopped_with_ctrl_c_exits_0_as_a_server_stops(toy_file):
    seq.deploy(toy_file)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-c", "from seq.cli import main; main()", "ui", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_ctrl_c,
    )
    try:
        assert "seq console at" in server.stdout.readline()
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=30)
    finally:
        server.kill()
    assert server.returncode == 0 and "Traceback" not in err, err


def test_a_benchmark_page_orders_its_evals_by_version(client, toy_file):
    changed = toy_file.with_name("line_bench_v2.py")
    changed.write_text(toy_file.read_text() + "\n# the same benchmarks, a new version\n")
    seq.deploy(changed)
    newer = seq.eval.run("line-controller", benchmark="line", envs=2)
    page = client.get("/benchmarks/line").text
    rows = page[page.index('<table id="trend">') :]
    versions = [
        cell.split("</td>")[0]
        for cell in rows.split('<tr data-eval="')[1:]
        for cell in [cell.split("<td>")[1]]
    ]
    assert versions == ["v1", "v1", "v2"] and rows.index(newer.eval_id) > rows.index(RUNNING_ID)
    success = newer.metric("success")
    assert f"{success.value:.2f} [{success.low:.2f}, {success.high:.2f}]" in rows


def test_a_benchmark_page_shows_the_episodes_an_eval_lost_to_errors(client):
    errored = seq.eval.run("line-controller", benchmark="line-errors", tasks=["near", "boom-reset"], envs=1)
    page = client.get("/benchmarks/line-errors").text
    row = page[page.index(f'<tr data-eval="{errored.eval_id}"') :].split("</tr>")[0]
    assert "3/3<br>" in row and "errors 2 of 3" in row
    assert "errors" not in client.get("/benchmarks/line").text.split('<table id="trend">')[1]


def test_the_policy_filter_offers_every_arm_s_policy(client):
    seq.eval.run("line-controller", benchmark="line", vs="random", envs=1, seeds=[0])
    page = client.get("/").text
    assert '<option value="random"' in page and '<option value="line-controller"' in page
    assert client.get("/?policy=random").text.count("line-controller") >= 1  # the eval with that arm


NAN_REWARD = """
import seq


class Env:
    def reset(self, seed=None):
        self.t = 0
        return [0.0], {}

    def step(self, action):
        self.t += 1
        return [0.0], float("nan"), self.t >= 2, False, {}


@seq.benchmark(name="nan-reward", conditions=seq.conditions(tasks=["t"], seeds=range(3)), max_steps=5)
class NanReward(seq.Benchmark):
    @seq.reset
    def reset(self, seed, variant):
        return Env()

    @seq.check
    def check(self, env):
        return seq.Step(done=env.t >= 2, metrics={"success": float(env.t >= 2), "gap": float("inf")})


@seq.policy(name="nan-idle")
class Idle(seq.Policy):
    @seq.infer
    def infer(self, obs, *, scale: float = 1.0, **_):
        return [0.0]
"""


def test_a_nan_reward_or_metric_does_not_break_a_page(client, tmp_path):
    path = tmp_path / "nan_reward.py"
    path.write_text(NAN_REWARD)
    seq.deploy(path)
    report = seq.eval.run("nan-idle", benchmark="nan-reward", envs=1)
    scaled = seq.eval.run("nan-idle", benchmark="nan-reward", envs=1, seeds=[0], params={"scale": math.nan})
    # the record keeps NaN as Python's json writes it (`NaN`, which SQLite's JSON functions refuse)
    assert math.isnan(Store().episodes(report.eval_id)[0].metrics["return"])
    compare = f"/compare?a={report.eval_id}&b={RUNNING_ID}"
    for url in ("/", f"/evals/{report.eval_id}", "/benchmarks/nan-reward", compare):
        page = client.get(url)
        assert page.status_code == 200, url
    eval_page = client.get(f"/evals/{report.eval_id}").text
    assert ">success (3)</a>" in eval_page and eval_page.count('class="episode-link"') == 3
    row = client.get("/").text.split(f'<tr data-eval="{report.eval_id}"')[1].split("</tr>")[0]
    assert "1.00" in row  # the success rate of its three episodes
    episode = client.get(f"/evals/{report.eval_id}/episode", params={"item": "t|seed=0"})
    assert episode.status_code == 200
    listed = client.get("/?policy=nan-idle").text  # the policy filter reads every manifest
    assert f'<tr data-eval="{scaled.eval_id}"' in listed  # its manifest holds a NaN


def test_an_episode_page_shows_each_value_once_at_readable_precision(client):
    """Seen: `return 201.04816803574278`, and `steps` listed twice (a field and a metric)."""
    import re

    (row,) = [row for row in seq.eval.ls() if row["status"] == "completed"]
    episode = seq.eval.report(row["id"]).episodes[0]
    page = client.get(f"/evals/{row['id']}/episode", params={"item": episode.item_id}).text
    assert page.count("<th>steps</th>") == 1 and page.count("<th>duration_s</th>") == 0
    shown = re.search(r'data-metric="return">([^<]*)<', page).group(1)
    assert shown == f"{episode.metrics['return']:.6g}"  # six significant digits
    assert re.search(r'data-metric="success">1<', page)  # a whole number without ".0"
