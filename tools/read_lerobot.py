"""Read a dataset with lerobot's own `LeRobotDataset` and print what it holds, as JSON.

    SEQ_LEROBOT_PYTHON tools/read_lerobot.py DATASET_ROOT [INDEX ...]

Run with the Python of `tools/lerobot_venv.sh`. torchvision's PyPI wheel links the CUDA build of
torch; with the CPU build its C operators cannot register, so their registration modules are left
out (the dataset reader uses only torchvision's Python transforms).

Videos: lerobot 0.4.4 decodes with torchcodec, else with `torchvision.io.VideoReader` ("pyav").
torchcodec's PyPI wheel links CUDA torch too, and torchvision 0.28 (the one for this torch) no
longer has `VideoReader`; where it is missing, a stand-in with its interface (seek to the key
frame before a time, then every frame's RGB tensor and presentation time, from PyAV, as the old
one read them) takes its place, so that lerobot's own `__getitem__` (its timestamps, its frame
lookup and its tolerance check) decodes the frames. For each INDEX, the mean of each video
frame's pixels (0–1) is printed, to compare with a decoder of one's own.
"""

import json
import sys
import types

for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
    sys.modules[name] = types.ModuleType(name)

import av  # noqa: E402
import torch  # noqa: E402
import torchvision.io  # noqa: E402


class VideoReader:
    """torchvision's former `VideoReader(path, "video")` over PyAV: `seek`, then frames as
    `{"data": uint8 C×H×W tensor, "pts": seconds}`."""

    def __init__(self, path: str, stream: str = "video") -> None:
        self.container = av.open(path)
        self._stream = self.container.streams.video[0]

    def seek(self, seconds: float, keyframes_only: bool = True) -> None:
        offset = int(seconds / self._stream.time_base)
        self.container.seek(offset, stream=self._stream, backward=True, any_frame=not keyframes_only)

    def __iter__(self):
        for frame in self.container.decode(self._stream):
            pixels = torch.from_numpy(frame.to_ndarray(format="rgb24")).permute(2, 0, 1)
            yield {"data": pixels, "pts": float(frame.time)}


if not hasattr(torchvision.io, "VideoReader"):
    torchvision.io.VideoReader = VideoReader

from lerobot.datasets.lerobot_dataset import CODEBASE_VERSION, LeRobotDataset  # noqa: E402

try:
    import torchcodec  # noqa: F401

    backend = None
except Exception:
    backend = "pyav"
dataset = LeRobotDataset("seq/hard-cases", root=sys.argv[1], video_backend=backend)
first, last = dataset[0], dataset[len(dataset) - 1]
keys = dataset.meta.video_keys
frames = {}
for index in [int(i) for i in sys.argv[2:]]:
    item = dataset[index]
    frames[index] = {key: float(item[key].float().mean()) for key in keys}
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
            "video_keys": keys,
            "video_means": frames,
        }
    )
)
