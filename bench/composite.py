"""A slow planner does not slow the steps: a composite policy's steps/s against the same policy
without a planner.

    python bench/composite.py [--planner-s 5] [--every-s 2] [--infer-ms 10] [--repeats 3]

The policy is MetaWorld's scripted expert behind an `infer` that takes `--infer-ms` (a low-level
model's latency). The composite adds `@seq.plan(every_s=--every-s)`, whose planner is a real
OpenAI-compatible HTTP server (in this process) that takes `--planner-s` seconds per answer. Both
run the same MetaWorld episodes (push-v3 and reach-v3, seeds 0 and 1, held to 500 steps so that a
slow planner answers within them; inline, two workers); steps/s is the steps over the time from
each episode's first act to its last (resets and worker start-up left out). The two run in turn
`--repeats` times; the ratio is given for the best run of each and as the median of the turns'
ratios (each turn's two runs saw about the same load on the machine).

Goal: the composite's steps/s within 5 % of the plain policy's (ratio >= 0.95). On a busy machine
the runs' own spread is larger than that; the last line measures what the planner adds to each
act by itself (`Planning.use` while a plan call is in flight), free of that noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

POLICIES = """
import os
import time

import seq
from seq.shelf.metaworld import MetaWorldExpert, make_env

INFER_S = {infer_s}


@seq.benchmark(name="metaworld-hold", conditions=seq.conditions(tasks=["push-v3", "reach-v3"], seeds=[0, 1]),
               max_steps=500)
class MetaWorldHold(seq.Benchmark):
    \"\"\"MetaWorld's tasks held to 500 steps (no early end at success): episodes long enough for
    a slow planner to answer in them.\"\"\"

    @seq.setup
    def setup(self):
        self.envs = {{}}

    @seq.reset
    def reset(self, seed, variant):
        return make_env(variant.task, seed, self.envs, 500)

    @seq.check
    def check(self, env):
        return seq.Step(done=False, metrics={{"success": float(env.info.get("success", 0.0))}})


class Expert(seq.Policy):
    \"\"\"MetaWorld's expert behind a model's latency; each step's time goes to a log per process.\"\"\"

    @seq.load
    def load(self, weights_dir):
        self.expert = MetaWorldExpert()
        self.expert.load(weights_dir)
        self.log = open(f"{{os.environ['BENCH_LOG']}}.{{os.getpid()}}", "a", buffering=1)

    @seq.begin
    def begin(self):
        self.log.write("begin\\n")

    @seq.infer
    def infer(self, obs, *, seed=None, instruction=None):
        self.log.write(f"{{time.perf_counter()}}\\n")
        time.sleep(INFER_S)
        return self.expert.infer(obs, instruction=instruction.partition(":")[0])


@seq.policy(name="expert-plain")
class Plain(Expert):
    pass


@seq.policy(name="expert-led", models=["planner"])
class Led(Expert):
    @seq.plan(every_s={every_s})
    def plan(self, obs, *, instruction=None):
        step = self.chat("planner", [{{"role": "user", "content": f"Task: {{instruction}}"}}], max_tokens=16)
        return f"{{instruction}}: {{step}}"
"""


def _steps_per_s(log: Path) -> float:
    """Steps over stepping time, from each episode's first act to its last (resets left out)."""
    steps, seconds = 0, 0.0
    for path in log.parent.glob(log.name + ".*"):
        episode: list[float] = []
        for line in [*path.read_text().splitlines(), "begin"]:
            if line == "begin":
                if len(episode) > 1:
                    steps, seconds = steps + len(episode) - 1, seconds + episode[-1] - episode[0]
                episode = []
            else:
                episode.append(float(line))
        path.unlink()
    return steps / seconds


def _run(policy: str, log: Path, envs: int) -> tuple[float, int, int]:
    """(steps/s, episodes, plans) of one eval of `policy`."""
    import seq
    from seq.capture.trajectory import read_trajectory

    report = seq.eval.run(policy, benchmark="metaworld-hold", envs=envs, trajectories=True)
    episodes = [e for e in report.episodes if e.status == "ok"]
    plans = sum(len(read_trajectory(e.artifacts["trajectory"]).plans) for e in episodes)
    return _steps_per_s(log), len(episodes), plans


def _cost_per_act_us(acts: int = 200_000) -> float:
    """What the planner adds to each act, alone: `Planning.use` while a plan call is in flight."""
    import threading

    import seq
    from seq.authoring.policy import policy_spec_of
    from seq.serving.planning import Planning

    answered = threading.Event()

    @seq.policy(name="cost")
    class Cost(seq.Policy):
        @seq.plan(every_s=2.0)
        def plan(self, obs, *, instruction=None):
            answered.wait()
            return "next"

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return [0.0]

    planning = Planning(Cost(), policy_spec_of(Cost))
    planning.begin("robot")
    start = time.perf_counter()
    for index in range(acts):
        planning.use("robot", index, "task")
    cost = (time.perf_counter() - start) / acts * 1e6
    answered.set()
    planning.end("robot")
    return cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--planner-s", type=float, default=5.0, help="seconds the planner takes per answer")
    parser.add_argument("--every-s", type=float, default=2.0, help="@seq.plan(every_s=...)")
    parser.add_argument("--infer-ms", type=float, default=10.0, help="the low-level infer's latency")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--envs", type=int, default=2, help="worker processes")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="seq-bench-composite-"))
    os.environ["SEQ_HOME"] = str(home)
    log = home / "steps"
    os.environ["BENCH_LOG"] = str(log)
    from fake_chat import FakeChatServer, write_models

    import seq

    source = home / "policies.py"
    source.write_text(textwrap.dedent(POLICIES.format(infer_s=args.infer_ms / 1000, every_s=args.every_s)))
    with FakeChatServer(["approach", "grasp", "push"], delay_s=args.planner_s) as chat:
        write_models(home, chat.base_url)
        seq.deploy(source)
        results: dict[str, list[tuple[float, int, int]]] = {"expert-plain": [], "expert-led": []}
        for _ in range(args.repeats):
            for policy in results:
                results[policy].append(_run(policy, log, args.envs))
        calls = len(chat.requests)
    plain = max(results["expert-plain"])
    led = max(results["expert-led"])
    ratio = led[0] / plain[0]
    turns = sorted(b[0] / a[0] for a, b in zip(results["expert-plain"], results["expert-led"], strict=True))
    median = statistics.median(turns)
    print(
        f"planner {args.planner_s:g} s per answer, every_s={args.every_s:g}, infer {args.infer_ms:g} ms; "
        f"best of {args.repeats}"
    )
    print(f"{'':22}{'steps/s':>10}{'episodes':>10}{'plans':>8}")
    print(f"{'without a planner':22}{plain[0]:>10.1f}{plain[1]:>10}{'-':>8}")
    print(f"{'with the planner':22}{led[0]:>10.1f}{led[1]:>10}{led[2]:>8}")
    print(f"ratio {ratio:.3f} best to best, {median:.3f} median of the turns (goal: >= 0.95)")
    print(f"the planner was called {calls} times; every turn's ratio: {[round(t, 3) for t in turns]}")
    print("all runs, steps/s:", {k: [round(r[0], 1) for r in v] for k, v in results.items()})
    print(f"the planner's own cost per act (Planning.use, no eval): {_cost_per_act_us():.1f} µs")


if __name__ == "__main__":
    main()
