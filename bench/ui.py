"""How the console and the HTML report scale: a record of 200 evals and 100,000 episodes.

    python bench/ui.py [--evals 200] [--episodes 100000] [--big 10000] [--home DIR]

Builds the record through the record API (`Store.create_eval`, `Store.write_episode`: one
committed row per episode, as a runner writes them) into a fresh SEQ_HOME: one eval of `--big`
episodes (two arms, 50 tasks, every episode with a recording named), the rest spread over the
other evals (four benchmarks, three versions each). Then, server-side (Starlette's test client,
no browser, no network):

- the evals list (`/`): milliseconds, and how many SQL statements it ran (a fixed number, not one
  per eval: `seq.console.queries`);
- an eval's page (`/evals/ID`) of a typical eval and of the big one, cold (the report computed)
  and warm (unchanged eval: the page's report is kept);
- a benchmark's page (its evals over versions);
- the HTML report of the big eval: seconds to build, and its size (the goal: under 2 MB).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

TASKS = 10
BIG_TASKS = 50


def build(evals: int, episodes: int, big: int) -> list[str]:
    """Write the record; returns the eval ids, the big one first."""
    import seq
    from seq.authoring.conditions import Condition
    from seq.record.arguments import ArmArguments, EvalArguments
    from seq.record.manifest import ArmManifest, Manifest, Pinned, SeqBuild
    from seq.record.store import COMPLETED, FAILED, Store, WorkItem

    store = Store()
    rng = random.Random(0)
    policy, _ = store.register_version("policy", "bench-policy", "p" * 64, {}, {})
    benchmarks = [
        store.register_version("benchmark", f"bench-{b}", f"{b}{v}".ljust(64, "0"), {}, {})[0]
        for b in range(4)
        for v in range(3)
    ]
    rest = (episodes - big) // (evals - 1)
    ids = []
    for index in range(evals):
        benchmark = benchmarks[index % len(benchmarks)] if index else benchmarks[0]
        two_arms = index == 0
        tasks = BIG_TASKS if index == 0 else TASKS
        count = big if index == 0 else rest
        arms = ["base", "tuned"] if two_arms else [""]
        per_arm = count // len(arms)
        seeds = per_arm // tasks
        eval_id = f"ev-bench{index:05d}"
        arm_manifests = [
            ArmManifest(
                arm,
                policy.label,
                policy.name,
                policy.version,
                policy.sha256,
                {"noise": str(i)},
                {"policy": {"noise": float(i)}},
            )
            for i, arm in enumerate(arms)
            if arm
        ]
        manifest = Manifest(
            seq=SeqBuild(seq.__version__),
            benchmark=Pinned(benchmark.name, benchmark.version, benchmark.sha256),
            policy=Pinned(policy.name, policy.version, policy.sha256),
            arms=arm_manifests,
            seeds=list(range(seeds)),
            declared={"metrics": {"success": "rate"}},
        )
        arguments = EvalArguments(
            benchmark=benchmark.label, arms=[ArmArguments(name=a, policy=policy.label) for a in arms if a]
        )
        items = []
        for arm in arms:
            for task in range(tasks):
                for seed in range(seeds):
                    key = f"task{task:02d}|seed={seed}"
                    condition = Condition(f"task{task:02d}", seed, suite=f"suite{task % 3}")
                    item_id = f"{arm}/{key}" if arm else key
                    items.append(WorkItem(item_id, len(items), condition, 0, arm))
        store.create_eval(eval_id, policy, benchmark, arguments, manifest, items)
        skill = rng.uniform(0.2, 0.9)
        for item in items:
            p = min(0.98, skill + 0.05 * (item.arm == "tuned") + 0.01 * (int(item.condition.task[-2:]) % 10))
            success = float(rng.random() < p)
            steps = rng.randint(20, 200)
            errored = rng.random() < 0.01
            artifacts = {"video": f"/videos/{eval_id}/{item.ordinal}.mp4"} if index == 0 else {}
            result = item.result(
                status="error" if errored else "ok",
                metrics={} if errored else {"success": success, "steps": float(steps), "return": -steps / 10},
                steps=steps,
                duration_s=steps / 500,
                ended_by="error" if errored else "check",
                error="Traceback (most recent call last):\nRuntimeError: the gripper left the table"
                if errored
                else None,
                failure="benchmark" if errored else None,
                artifacts=artifacts,
            )
            store.write_episode(eval_id, result)
        store.set_eval_status(eval_id, FAILED if index % 50 == 7 else COMPLETED)
        ids.append(eval_id)
    store.close()
    return ids


class Took(tuple):
    """(wall seconds, CPU seconds of this process): on a machine other processes keep busy, the
    CPU time is what the page cost."""

    def __str__(self) -> str:
        return f"{self[0] * 1000:.0f} ms ({self[1] * 1000:.0f} ms CPU)"


def timed(client, url: str) -> tuple[Took, int]:
    started, cpu = time.perf_counter(), time.process_time()
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code, response.text[:300])
    return Took((time.perf_counter() - started, time.process_time() - cpu)), len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=200)
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--big", type=int, default=10_000)
    parser.add_argument(
        "--home", type=Path, default=None, help="Write the record here (default: a tmp folder)."
    )
    options = parser.parse_args()
    home = options.home or Path(tempfile.mkdtemp(prefix="seq-bench-ui-"))
    os.environ["SEQ_HOME"] = str(home)

    from starlette.testclient import TestClient

    import seq

    started = time.perf_counter()
    reused = (home / "seq.db").is_file()  # a record this script wrote before: timed again as it is
    ids = sorted(seq.Store().eval_ids()) if reused else build(options.evals, options.episodes, options.big)
    store = seq.Store()
    written = store._db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    how = "reused" if reused else f"written in {time.perf_counter() - started:.1f} s"
    print(f"record: {len(ids)} evals, {written:,} episodes {how}")

    app = seq.console.create_app(store.path)
    data = app.state.data
    with TestClient(app) as client:
        timed(client, "/benchmarks")  # the process warmed up: connections, templates
        before = data.queries
        cold, size = timed(client, "/")  # the record's tallies computed (and the templates loaded)
        queries = data.queries - before
        warm, _ = min(timed(client, "/") for _ in range(3))
        print(
            f"evals list (/): cold {cold}, {queries} SQL statements; "
            f"warm {warm} "
            f"(no episode changed: tallies kept), {size / 1024:.0f} KiB"
        )
        print(f"  (filtered by a benchmark: {timed(client, '/?benchmark=bench-1')[0]})")
        timed(client, f"/evals/{ids[2]}")  # the process warmed up: imports, templates
        for label, eval_id in (("typical eval", ids[1]), (f"{options.big:,}-episode eval", ids[0])):
            cold, size = timed(client, f"/evals/{eval_id}")
            warm, _ = min(timed(client, f"/evals/{eval_id}") for _ in range(3))
            print(
                f"eval page, {label} (/evals/{eval_id}): cold {cold}: report computed; "
                f"warm {warm}; {size / 1024:.0f} KiB"
            )
        page, _ = timed(client, f"/evals/{ids[1]}?outcome=fail&page=2")
        print(f"  episodes filtered and paged: {page}")
        trend, _ = timed(client, "/benchmarks/bench-1")
        count = len(data.reader.trend("bench-1"))
        print(f"benchmark page (/benchmarks/bench-1, {count} evals over 3 versions): {trend}")

    print(f"load average while timed: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    started = time.perf_counter()
    report = seq.eval.report(ids[0], store)
    built = time.perf_counter() - started
    started = time.perf_counter()
    html = report.to_html(home / "big.html").encode()
    rendered = time.perf_counter() - started
    verdict = "under" if len(html) < 2 * 1024 * 1024 else "OVER"
    print(
        f"HTML report of the {options.big:,}-episode eval: {len(html) / 1024 / 1024:.2f} MiB "
        f"({verdict} 2 MiB; "
        f"{report.done:,} episodes, {len(report.groups)} groups, every episode's recording linked); "
        f"report {built:.1f} s, HTML {rendered:.1f} s"
    )
    print(f"record and report kept in {home}", file=sys.stderr)


if __name__ == "__main__":
    main()
