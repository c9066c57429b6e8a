"""A benchmark written in the style of the seq docs, over MetaWorld environments.

seq deploy examples/metaworld_custom.py
seq eval run metaworld-expert --benchmark metaworld-custom
"""

import metaworld

import seq

TASKS = ["reach-v3", "push-v3", "drawer-close-v3", "window-open-v3"]


class LastInfo:
    """A gym-style env that remembers its last step's info, so `check` can read success."""

    def __init__(self, env):
        self.env, self.info = env, {}
        self.action_space = env.action_space

    def reset(self, seed=None):
        self.info = {}
        return self.env.reset(seed=seed)

    def step(self, action):
        obs, reward, terminated, truncated, self.info = self.env.step(action)
        return obs, reward, terminated, truncated, self.info


@seq.benchmark(
    name="metaworld-custom",
    conditions=seq.conditions(
        tasks=TASKS,
        seeds=[0, 1],
        suite_of={
            "reach-v3": "reaching",
            "push-v3": "pushing",
            "drawer-close-v3": "articulated",
            "window-open-v3": "articulated",
        },
    ),
    max_steps=150,  # cost backstop; done is decided by check
)
class MetaWorldCustom(seq.Benchmark):
    @seq.setup
    def setup(self, goal_set_seed: int = 0):
        self.goal_set_seed = goal_set_seed
        self.goals = {}

    @seq.reset
    def reset(self, seed, variant):
        if variant.task not in self.goals:
            self.goals[variant.task] = metaworld.MT1(variant.task, seed=self.goal_set_seed)
        goals = self.goals[variant.task]
        env = goals.train_classes[variant.task]()
        env.set_task(goals.train_tasks[seed % len(goals.train_tasks)])
        return LastInfo(env)  # a real env handle

    @seq.check
    def check(self, env):
        success = float(env.info.get("success", 0.0))
        return seq.Step(done=success == 1.0, metrics={"success": success})

    @seq.score
    def score(self, results):  # once per group: overall, each suite, each task
        wins = [r for r in results if r.metrics["success"]]
        return {"fast_success": sum(r.steps <= 80 for r in wins) / len(results)}
