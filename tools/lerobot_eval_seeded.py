"""LeRobot 0.4.4's own `lerobot-eval`, with torch seeded at each episode as seq's `lerobot` policy
seeds it, so that a diffusion policy draws the same noise in both; prints each episode's seed,
steps, success and return as one JSON line.

    $SEQ_LEROBOT_PYTHON tools/lerobot_eval_seeded.py [--no-videos] --policy.path=DIR --env.type=pusht \\
        --eval.n_episodes=5 --eval.batch_size=1 --seed=0 --policy.device=cpu --output_dir=OUT

With `--eval.batch_size=1` episode k runs on seed `--seed` + k, as `lerobot-eval` seeds it. Each
rollout seeds torch with its first environment's seed before its first act (LeRobot's own code
seeds it once, before loading the policy). `--no-videos`: none rendered (`lerobot-eval` renders
its first 10 episodes), to compare throughput without them. Nothing else is changed.
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


lerobot_eval.rollout = rollout
lerobot_eval.eval_policy_all = eval_policy_all
lerobot_eval.main()
