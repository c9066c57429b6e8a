"""MetaWorld in an image of its own: seq's environment need not have MetaWorld installed.

    seq deploy examples/metaworld_in_an_image.py
    seq eval run metaworld-expert --benchmark metaworld-in-an-image

The first eval builds the image (a virtual environment made with uv, cached under `SEQ_HOME` by the
content of its description); every later eval reuses it. The benchmark is the built-in one, so the
rows match an eval of `metaworld` in seq's own environment, seed for seed.
"""

import seq
from seq.shelf.metaworld import MT10, MetaWorld

IMAGE = seq.Image.debian_slim().uv_pip_install(
    "metaworld==3.1.1",
    "mujoco==3.3.0",
    "gymnasium>=1.0",
    "packaging",
    "av>=17,<19",
    "fast-simplification>=0.1.9,<0.3",
)


@seq.benchmark(
    name="metaworld-in-an-image",
    conditions=seq.conditions(tasks=MT10, seeds=range(3)),
    max_steps=500,
    image=IMAGE,
)
class MetaWorldInAnImage(MetaWorld):
    pass
