"""`libero-to-lerobot`: the `libero` benchmark's observation as LeRobot's LIBERO environment and
its processor give it to a LeRobot policy, so a LeRobot LIBERO checkpoint runs under the built-in
policy `lerobot`:

    seq eval run lerobot --benchmark libero --adapter libero-to-lerobot --param pretrained=DIR --serve

What LeRobot 0.4.4 does (`lerobot.envs.libero`, `LiberoProcessorStep`) and what this does: the
agent-view camera as `observation.images.image` and the wrist camera as
`observation.images.image2`, both turned upright (LeRobot's processor turns robosuite's images
180°; seq's already are); the 8-D `observation.state`: end-effector position, its orientation as
an axis-angle, the two finger positions (the numbers LeRobot's processor computes, in float64
where it computes in float32). Here they take the keys LeRobot's environments give
(`pixels/image`, `pixels/image2`, `agent_pos`), which the policy hands to LeRobot's own
`preprocess_observation` (CHW float images in [0, 1], the state as a float tensor). Actions, 7
numbers, go to LIBERO as they come. The policy runs where LeRobot is installed, not in LIBERO's
image: `--serve` serves it from the Python that runs the eval.
"""

from __future__ import annotations

import seq
from seq import tf


@seq.adapter(name="libero-to-lerobot")
class LiberoToLeRobot(seq.Adapter):
    """The `libero` benchmark's published observation → LeRobot's LIBERO observation (module doc)."""

    observation_spec = {
        "agentview_image": ((256, 256, 3), "uint8"),
        "wrist_image": ((256, 256, 3), "uint8"),
        "state": ((8,), "float64"),
    }
    action_spec = (7,)

    def __init__(self) -> None:
        self.obs_transforms = [
            tf.rename(
                {"agentview_image": "pixels/image", "wrist_image": "pixels/image2", "state": "agent_pos"}
            )
        ]
        self.action_transforms = []
