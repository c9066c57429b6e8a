"""The full authoring example (a volume, a secret, an image, setup, score and a recording), written
as a user writes it, over MetaWorld.

Only what such an example leaves to the reader is filled in: TASKS and their suites, `make_env` (a real
MetaWorld env whose `done` says it succeeded), the image's packages, the volume's and the secret's
names, a camera MetaWorld has, and `fast_success`'s step bar, which score reads from what setup loaded.
"""

import json

import seq

TASKS = ["reach-v3", "button-press-topdown-v3"]


def make_env(task, seed):
    """MetaWorld's env for `task`, goal configuration `seed`, with `done` once it succeeded."""
    import gymnasium
    import metaworld

    class Done(gymnasium.Wrapper):
        done = False

        def reset(self, **kwargs):
            self.done = False
            return self.env.reset(**kwargs)

        def step(self, action):
            obs, reward, terminated, truncated, info = self.env.step(action)
            self.done = bool(info["success"])
            return obs, reward, terminated, truncated, info

    goals = metaworld.MT1(task, seed=0)
    env = goals.train_classes[task]()
    env.set_task(goals.train_tasks[seed % len(goals.train_tasks)])
    return Done(env)


# Spaced as a user spaced it: the formatter leaves it so.
# fmt: off
@seq.benchmark(
    name="metaworld-custom",
    image=seq.Image.debian_slim().uv_pip_install(
        "metaworld==3.1.1", "mujoco==3.3.0", "gymnasium>=1.0", "packaging", "av>=17,<19",
        "fast-simplification>=0.1.9,<0.3",
    ),
    gpu="cpu", cpu=16, memory=32,               # classic MuJoCo: CPU machines, one environment per core
    conditions=seq.conditions(tasks=TASKS, seeds=[0, 1], suite_of={"reach-v3": "reaching",
                                                                   "button-press-topdown-v3": "pressing"}),
    max_steps=220,                                # cost backstop; done is decided by check
    assets=seq.Volume.from_name("metaworld-assets"),    # your uploaded files, read-only at /assets
    secrets=[seq.Secret.from_name("bench-token")], # env vars for the sim, never the policy
    render=seq.Record(camera="corner2", fps=20),   # an mp4 of each task's first seed
)
class MetaWorldCustom(seq.Benchmark):
    @seq.setup
    def setup(self):
        self.settings = json.load(open("/assets/tasks.json"))
    @seq.reset
    def reset(self, seed, variant):
        return make_env(variant.task, seed)                 # a real env handle
    @seq.check
    def check(self, env):
        return seq.Step(done=env.done, metrics={"success": float(env.done)})
    @seq.score
    def score(self, results):                        # once per group: overall, each suite, each task
        wins = [r for r in results if r.metrics["success"]]
        return {"fast_success": sum(r.steps <= self.settings["fast_steps"] for r in wins) / len(results)}
# fmt: on
