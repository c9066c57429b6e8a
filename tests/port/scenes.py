"""Edited copies of exported scenes, as a user porting by hand would make them."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path


def heavier(scene: Path, destination: Path, body: str, factor: float) -> Path:
    """A copy of `scene` whose `body` is `factor` times as heavy (mass and inertia)."""
    shutil.copytree(scene, destination)
    path = destination / "scenes" / "s0" / "scene.xml"
    root = ElementTree.parse(path).getroot()
    inertial = next(e for e in root.iter("body") if e.get("name") == body).find("inertial")
    inertial.set("mass", repr(float(inertial.get("mass")) * factor))
    inertia = [float(v) * factor for v in inertial.get("diaginertia").split()]
    inertial.set("diaginertia", " ".join(map(repr, inertia)))
    path.write_text(ElementTree.tostring(root, encoding="unicode"))
    return destination
