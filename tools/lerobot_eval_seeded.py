"""LeRobot 0.4.4's own `lerobot-eval`, with torch seeded at each episode as seq's `lerobot` policy
seeds it, so that a diffusion policy draws the same noise in both; prints each episode's seed,
steps, success and return as one JSON line.

    $SEQ_LEROBOT_PYTHON tools/lerobot_eval_seeded.py [--no-videos] --policy.path=DIR --env.type=pusht \\
        --eval.n_episodes=5 --eval.batch_size=1 --seed=0 --policy.device=cpu --output_dir=OUT

With `--eval.batch_size=1` episode k runs on seed `--seed` + k, as `lerobot-eval` seeds it. Each
rollout seeds torch with its first environment's seed before its first act (LeRobot's own code
seeds it once, before loading the policy). `--no-videos`: none rendered (`lerobot-eval` renders
its first 10 episodes), to compare throughput without them.

With `--env.type=metaworld`, LeRobot's `MetaworldEnv` starts each episode as seq's `metaworld`
condition of that seed does: MetaWorld's goal configuration `seed % 50` of `MT1(task, seed=0)`
(LeRobot's draws a random start around `MT1(task, seed=42)`'s first), drawn after the scene is
brought up to date (MetaWorld's reset leaves the goal's marker where the previous episode left
it), and ends at `--env.episode_length` steps (LeRobot's env keeps MetaWorld's 500). Nothing else
is changed.
"""

import json
import sys

import torch
from lerobot.scripts import lerobot_eval

no_videos = "--no-videos" in sys.argv
sys.argv = [arg for arg in sys.argv if arg != "--no-videos"]
original_rollout, original_eval_policy_all = lerobot_eval.rollout, lerobot_eval.eval_policy_all


def rollout(env, policy, *args, seeds=None, **kwargs):
    torch.manual_seed(0 if seeds is None else int(seeds[0]))
    data = original_rollout(env, policy, *args, seeds=seeds, **kwargs)
    done = data["done"].to(int)  # [batch, steps run]
    for index in range(done.shape[0]):
        ended = bool(done[index].any())
        steps = int(torch.argmax(done[index])) + 1 if ended else done.shape[1]
        episode = {
            "seed": None if seeds is None else int(seeds[index]),
            "steps": steps,
            "success": bool(data["success"][index, :steps].any()),
            "return": float(data["reward"][index, :steps].sum()),
        }
        print("episode " + json.dumps(episode), flush=True)
    return data


def eval_policy_all(*args, **kwargs):
    if no_videos:
        kwargs["max_episodes_rendered"] = 0
    return original_eval_policy_all(*args, **kwargs)


def start_metaworld_as_seq_does(episode_length: int) -> None:
    import metaworld
    import mujoco
    from lerobot.envs import metaworld as lerobot_metaworld

    original_init = lerobot_metaworld.MetaworldEnv.__init__
    original_reset = lerobot_metaworld.MetaworldEnv.reset

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self._env.max_path_length = self._max_episode_steps = episode_length
        self.goals = metaworld.MT1(self.task, seed=0).train_tasks
        simulation, raw_reset = self._env, self._env.reset

        def reset_up_to_date(**kwargs):
            output = raw_reset(**kwargs)
            warmstart = simulation.data.qacc_warmstart.copy()
            mujoco.mj_forward(simulation.model, simulation.data)
            simulation.data.qacc_warmstart[:] = warmstart
            return output

        self._env.reset = reset_up_to_date

    def reset(self, seed=None, **kwargs):
        if seed is not None:
            self._env.set_task(self.goals[seed % len(self.goals)])
        return original_reset(self, seed=seed, **kwargs)

    lerobot_metaworld.MetaworldEnv.__init__ = init
    lerobot_metaworld.MetaworldEnv.reset = reset


if "--env.type=metaworld" in sys.argv:
    lengths = [arg.split("=", 1)[1] for arg in sys.argv if arg.startswith("--env.episode_length=")]
    start_metaworld_as_seq_does(int(lengths[-1]) if lengths else 500)
lerobot_eval.rollout = rollout
lerobot_eval.eval_policy_all = eval_policy_all
lerobot_eval.main()
