"""Read a dataset with lerobot's own `LeRobotDataset` and print what it holds, as JSON.

    SEQ_LEROBOT_PYTHON tools/read_lerobot.py DATASET_ROOT

Run with the Python of `tools/lerobot_venv.sh`. torchvision's PyPI wheel links the CUDA build of
torch; with the CPU build its C operators cannot register, so their registration modules are left
out (the dataset reader uses only torchvision's Python transforms).
"""

import json
import sys
import types

for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
    sys.modules[name] = types.ModuleType(name)

from lerobot.datasets.lerobot_dataset import CODEBASE_VERSION, LeRobotDataset  # noqa: E402

dataset = LeRobotDataset("seq/hard-cases", root=sys.argv[1])
first, last = dataset[0], dataset[len(dataset) - 1]
print(
    json.dumps(
        {
            "codebase_version": CODEBASE_VERSION,
            "episodes": dataset.num_episodes,
            "frames": dataset.num_frames,
            "fps": dataset.fps,
            "shapes": {k: list(v.shape) for k, v in first.items() if hasattr(v, "shape")},
            "first_task": first["task"],
            "last_episode": int(last["episode_index"]),
        }
    )
)
