"""`metaworld-to-lerobot`: the `metaworld` benchmark's camera observation as LeRobot's MetaWorld
environment gives it to a LeRobot policy, so a LeRobot MetaWorld checkpoint runs under the
built-in policy `lerobot`:

    seq eval run lerobot --benchmark metaworld --adapter metaworld-to-lerobot --param pretrained=DIR

What LeRobot 0.4.4's `MetaworldEnv` (`obs_type=pixels_agent_pos`) gives and what this gives: the
corner2 camera, moved where LeRobot moves it, drawn at 480² and turned upright, as `pixels`
(`observation.image` once LeRobot's `preprocess_observation` has made it a CHW float image in
[0, 1]); the first 4 numbers of MetaWorld's 39-D state (the hand's position and the gripper's
opening) as `agent_pos` (`observation.state`). The `lerobot` policy asks the benchmark for that
camera (`obs_mode=pixels`); the image and the state come from the same MetaWorld env step as in
LeRobot's environment. Actions, 4 numbers, go to MetaWorld as they come. The instruction is the
task's sentence as LeRobot's env gives it as `task` (`Push the puck to a goal` for `push-v3`;
`TASK_SENTENCES`, LeRobot 0.4.4's table), where seq's is the task's name: a language-conditioned
policy (SmolVLA, pi0) reads it.
"""

from __future__ import annotations

from typing import Any

import seq
from seq import tf

STATE = 4  # LeRobot's agent_pos: the first entries of MetaWorld's state

# `TASK_DESCRIPTIONS` of LeRobot 0.4.4's `lerobot/envs/metaworld_config.json`, for each of
# MetaWorld's 50 tasks (tests/shelf/test_lerobot.py compares them with LeRobot's own).
TASK_SENTENCES = {
    "assembly-v3": "Pick up a nut and place it onto a peg",
    "basketball-v3": "Dunk the basketball into the basket",
    "bin-picking-v3": "Grasp the puck from one bin and place it into another bin",
    "box-close-v3": "Grasp the cover and close the box with it",
    "button-press-topdown-v3": "Press a button from the top",
    "button-press-topdown-wall-v3": "Bypass a wall and press a button from the top",
    "button-press-v3": "Press a button",
    "button-press-wall-v3": "Bypass a wall and press a button",
    "coffee-button-v3": "Push a button on the coffee machine",
    "coffee-pull-v3": "Pull a mug from a coffee machine",
    "coffee-push-v3": "Push a mug under a coffee machine",
    "dial-turn-v3": "Rotate a dial 180 degrees",
    "disassemble-v3": "Pick a nut out of a peg",
    "door-close-v3": "Close a door with a revolving joint",
    "door-lock-v3": "Lock the door by rotating the lock clockwise",
    "door-open-v3": "Open a door with a revolving joint",
    "door-unlock-v3": "Unlock the door by rotating the lock counter-clockwise",
    "drawer-close-v3": "Push and close a drawer",
    "drawer-open-v3": "Open a drawer",
    "faucet-close-v3": "Rotate the faucet clockwise",
    "faucet-open-v3": "Rotate the faucet counter-clockwise",
    "hammer-v3": "Hammer a screw on the wall",
    "hand-insert-v3": "Insert the gripper into a hole",
    "handle-press-side-v3": "Press a handle down sideways",
    "handle-press-v3": "Press a handle down",
    "handle-pull-side-v3": "Pull a handle up sideways",
    "handle-pull-v3": "Pull a handle up",
    "lever-pull-v3": "Pull a lever down 90 degrees",
    "peg-insert-side-v3": "Insert a peg sideways",
    "peg-unplug-side-v3": "Unplug a peg sideways",
    "pick-out-of-hole-v3": "Pick up a puck from a hole",
    "pick-place-v3": "Pick and place a puck to a goal",
    "pick-place-wall-v3": "Pick a puck, bypass a wall and place the puck",
    "plate-slide-back-side-v3": "Get a plate from the cabinet sideways",
    "plate-slide-back-v3": "Get a plate from the cabinet",
    "plate-slide-side-v3": "Slide a plate into a cabinet sideways",
    "plate-slide-v3": "Slide a plate into a cabinet",
    "push-back-v3": "Push the puck to a goal",
    "push-v3": "Push the puck to a goal",
    "push-wall-v3": "Bypass a wall and push a puck to a goal",
    "reach-v3": "Reach a goal position",
    "reach-wall-v3": "Bypass a wall and reach a goal",
    "shelf-place-v3": "Pick and place a puck onto a shelf",
    "soccer-v3": "Kick a soccer into the goal",
    "stick-pull-v3": "Grasp a stick and pull a box with the stick",
    "stick-push-v3": "Grasp a stick and push a box using the stick",
    "sweep-into-v3": "Sweep a puck into a hole",
    "sweep-v3": "Sweep a puck off the table",
    "window-close-v3": "Push and close a window",
    "window-open-v3": "Push and open a window",
}


def _lerobot_sentence(episode: dict[str, Any]) -> dict[str, Any]:
    return {
        **episode,
        "instruction": TASK_SENTENCES.get(episode.get("task") or "", episode.get("instruction")),
    }


@seq.adapter(name="metaworld-to-lerobot")
class MetaWorldToLeRobot(seq.Adapter):
    """The `metaworld` benchmark's `pixels` observation → LeRobot's MetaWorld observation (module doc)."""

    observation_spec = {"corner2_image": ((480, 480, 3), "uint8"), "state": ((39,), "float64")}
    action_spec = (4,)

    def __init__(self) -> None:
        self.obs_transforms = [
            tf.take(
                range(STATE), key="state", lossy="LeRobot's agent_pos is the hand's position and the gripper"
            ),
            tf.rename({"corner2_image": "pixels", "state": "agent_pos"}),
        ]
        self.action_transforms = []
        reason = "LeRobot's MetaWorld env gives its task's sentence; seq's task name is not sent"
        self.episode_transforms = [
            tf.custom(_lerobot_sentence, label=tf.lossy(reason), name="instruction as LeRobot's sentence")
        ]
