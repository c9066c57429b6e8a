"""`seq.tf`: the transforms an adapter is made of, each labelled `lossless` or `lossy(reason)`.

>>> seq.tf.resize("image", (256, 256), (224, 224), lossy="the policy takes 224x224")
>>> seq.tf.rename({"agentview_image": "image"})            # lossless: the registry checks it

Observation transforms take and return the whole observation (a dict, or one array); most act on
one key (`key="image"`) or, with `key=None`, on the whole value — how action transforms, which
get one action (1-D) at a time, are written. A transform of your own subclasses `Transform` (or
wraps functions with `custom`); a `lossless` label is a claim the registry tests with its
`inverse` (see `seq.tf.check`), so it cannot be self-certified.
"""

from seq.tf.action import clip, scale, take
from seq.tf.base import Transform, custom
from seq.tf.gripper import gripper
from seq.tf.image import chw_to_hwc, crop, flip, hwc_to_chw, layout, resize
from seq.tf.keys import concat, drop, rename, select
from seq.tf.labels import Label, lossless, lossy
from seq.tf.normalize import cast, denormalize, normalize
from seq.tf.rotation import rotation

__all__ = [
    "Label",
    "Transform",
    "cast",
    "chw_to_hwc",
    "clip",
    "concat",
    "crop",
    "custom",
    "denormalize",
    "drop",
    "flip",
    "gripper",
    "hwc_to_chw",
    "layout",
    "lossless",
    "lossy",
    "normalize",
    "rename",
    "resize",
    "rotation",
    "scale",
    "select",
    "take",
]
