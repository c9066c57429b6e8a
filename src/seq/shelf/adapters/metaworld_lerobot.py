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
LeRobot's environment. Actions, 4 numbers, go to MetaWorld as they come. Not mapped: the
instruction stays the task's name (`push-v3`), where LeRobot's env gives its sentence for the task
(`Push the puck to a goal`), which only a language-conditioned policy reads.
"""

from __future__ import annotations

import seq
from seq import tf

STATE = 4  # LeRobot's agent_pos: the first entries of MetaWorld's state


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
