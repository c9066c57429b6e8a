"""Scale-out on one machine, measured side by side in one run.

    python bench/scale_out.py [--tasks 4] [--seeds 10]

1. Episodes/s of a MetaWorld eval (metaworld-expert) on 1 and 2 local workers and on 2 Ray
   actors (a local Ray instance; goal: Ray >= 0.85x local at 2 workers), over each eval's own
   wall time (workers started to last episode; Ray's start-up is not counted).
2. `seq.evaluate` of a policy object in this process against a raw loop of the same expert,
   tasks and seeds in this process (goal: close to 1.0), timing a second call as a training loop
   makes it (the first pays for importing scipy.stats once).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def raw_loop(tasks: list[str], seeds: list[int]) -> tuple[int, float]:
    from metaworld.policies import ENV_POLICY_MAP

    from seq.shelf.metaworld import make_env

    start, cache, episodes = time.perf_counter(), {}, 0
    for task in tasks:
        expert = ENV_POLICY_MAP[task]()
        for seed in seeds:
            env = make_env(task, seed, cache)
            obs, _ = env.reset(seed=seed)
            for _ in range(500):
                obs, _, terminated, truncated, info = env.step(expert.get_action(obs))
                if info["success"] >= 1.0 or terminated or truncated:
                    break
            episodes += 1
    return episodes, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("SEQ_HOME", tempfile.mkdtemp(prefix="seq-bench-"))
    import ray

    import seq
    from seq.shelf.metaworld import MT10, MetaWorldExpert

    tasks, seeds = MT10[: args.tasks], list(range(args.seeds))
    kwargs = dict(benchmark="metaworld", tasks=tasks, seeds=seeds)
    print(f"{len(tasks)} tasks x {len(seeds)} seeds of metaworld-expert")
    rates = {}
    for name, options in (
        ("local --envs 1", {"envs": 1}),
        ("local --envs 2", {"envs": 2}),
        ("ray, 2 actors", {"envs": 2, "engine": "ray"}),
    ):
        if options.get("engine") == "ray":
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        report = seq.eval.run("metaworld-expert", **kwargs, **options)
        rates[name] = report.done / report.cost["wall_s"]
        wall = report.cost["wall_s"]
        print(f"  {name:>15}: {report.done} episodes in {wall:.2f} s -> {rates[name]:.2f} episodes/s")
    ray.shutdown()
    print(f"ray / local at 2 workers: {rates['ray, 2 actors'] / rates['local --envs 2']:.2f}  (goal >= 0.85)")

    episodes, raw_s = raw_loop(tasks, seeds)
    expert = MetaWorldExpert()
    expert.load(None)
    seq.evaluate(expert, **kwargs)  # a training loop calls it again and again: time a later call
    start = time.perf_counter()
    report = seq.evaluate(expert, **kwargs)
    evaluate_s = time.perf_counter() - start
    assert report.done == episodes
    print(f"raw loop: {raw_s:.2f} s; seq.evaluate (in process, with record and report): {evaluate_s:.2f} s")
    print(f"seq.evaluate / raw loop throughput: {raw_s / evaluate_s:.3f}")


if __name__ == "__main__":
    main()
