"""Python twins of `seq image ls / build / rm`: the virtual environments built for benchmarks'
`image=` (`seq.isolation.images`).

>>> built = seq.image.build("my-bench")
>>> [info.key for info in seq.image.ls()]
>>> seq.image.rm(built.key)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from seq.errors import SeqInputError

if TYPE_CHECKING:
    from seq.isolation.images import BuiltImage, ImageInfo
    from seq.record.store import Store


def ls() -> list[ImageInfo]:
    """Built images, most recently used first."""
    from seq.isolation.images import list_images

    return list_images()


def build(benchmark: str, store: Store | None = None, log: Callable[[str], None] | None = None) -> BuiltImage:
    """Build a benchmark's image now (NAME or NAME@vN; it is otherwise built by its first eval);
    `log` receives the build's progress lines."""
    from seq.isolation.images import ensure_image, image_of
    from seq.record.store import Store
    from seq.registry.deploy import resolve

    row = resolve("benchmark", benchmark, store or Store())
    declared = row.declared.get("declared")
    if declared is None:  # an older record: ask the class itself
        from seq.authoring.benchmark import spec_of
        from seq.registry.deploy import load_version

        declared = spec_of(load_version(row)).declared
    if declared.get("image") is None:
        raise SeqInputError(f"benchmark {row.label} declares no image= to build.")
    return ensure_image(image_of(declared["image"]), log=log)


def rm(key: str | None = None, *, all: bool = False) -> list[str]:
    """Remove the images whose key starts with `key`, or `all=True` every image; returns the keys
    removed. An eval that needs one again builds it again."""
    from seq.isolation.images import list_images, remove_image

    if all == (key is not None):
        raise SeqInputError("seq image rm takes a KEY (or the start of one), or --all.")
    if all:
        return [removed for info in list_images() for removed in remove_image(info.key)]
    return remove_image(key)  # type: ignore[arg-type]
