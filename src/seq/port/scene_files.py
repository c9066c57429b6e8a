"""A scene as files: the compiled model saved as MJCF with its assets beside it, and as MJB.

`mj_saveLastXML` writes the model MuJoCo last parsed, with the compiled model's numbers; its
asset paths are relative to the original file (and its compiler's meshdir/texturedir). The
assets are copied under `assets/` and the paths rewritten, so the scene loads from anywhere, on
any MuJoCo version that reads the MJCF. The saved XML drops compiler settings such as
`inertiagrouprange` (MetaWorld's arm takes its inertia from some geoms only), so every body gets
the inertia it compiled to, written out, and inertia from geoms is turned off. It also leaves
out every option equal to its MuJoCo's default, so a default another version changed would change
the scene: every option is written out too.
The MJB is exact, but only the same MuJoCo version reads it.
"""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import numpy as np

from seq.port.mujoco_state import structure

SCENE_XML = "scene.xml"
SCENE_MJB = "scene.mjb"
ASSETS = "assets"
_FILE_ATTRIBUTE = re.compile(r'\b(file\w*)="([^"]+)"')
_DIR_ATTRIBUTE = re.compile(r'\s(meshdir|texturedir|assetdir)="([^"]*)"')


def write_scene(mujoco: Any, model: Any, directory: Path, xml_files: list[Path]) -> None:
    """Write `model` as `scene.xml` (+ assets) and `scene.mjb` into `directory`; ValueError when no
    MJCF compiles back to the same model.

    The last model MuJoCo parsed is tried first (robosuite builds its XML in memory); when that
    is another model, each `.xml` file the env names is parsed again and tried."""
    directory.mkdir(parents=True, exist_ok=True)
    mujoco.mj_saveModel(model, str(directory / SCENE_MJB), None)
    xml_dirs = [path.parent for path in xml_files]
    if _try_last_xml(mujoco, model, directory, xml_dirs):
        return
    for path in xml_files:
        try:
            mujoco.MjModel.from_xml_path(str(path))
        except Exception:  # not a whole model (an include, an asset list)
            continue
        if _try_last_xml(mujoco, model, directory, xml_dirs):
            return
    raise ValueError(
        "no MJCF that compiles to this env's model was found (neither the last one MuJoCo parsed "
        "nor an .xml file the env names)"
    )


def _try_last_xml(mujoco: Any, model: Any, directory: Path, xml_dirs: list[Path]) -> bool:
    raw = directory / "raw.xml"
    try:
        mujoco.mj_saveLastXML(str(raw), model)
        text = _explicit_inertials(_bundle_assets(raw.read_text(), directory, xml_dirs), model)
        text = _explicit_options(text, model)
        (directory / SCENE_XML).write_text(text)
        again = mujoco.MjModel.from_xml_path(str(directory / SCENE_XML))
    except Exception:  # the last parsed spec does not fit this model
        return False
    finally:
        raw.unlink(missing_ok=True)
    return structure(mujoco, again) == structure(mujoco, model) and np.allclose(
        again.body_mass, model.body_mass, rtol=1e-6, atol=1e-9
    )


def _bundle_assets(text: str, directory: Path, xml_dirs: list[Path]) -> str:
    subdirs = dict(_DIR_ATTRIBUTE.findall(text))
    text = _DIR_ATTRIBUTE.sub("", text)
    copied: dict[Path, str] = {}

    def replace(match: re.Match[str]) -> str:
        source = _resolve(match.group(2), subdirs, xml_dirs)
        if source is None:
            raise ValueError(f"the scene's asset {match.group(2)!r} was not found next to the model's files")
        if source not in copied:
            copied[source] = f"{ASSETS}/{len(copied)}_{source.name}"
            target = directory / copied[source]
            target.parent.mkdir(exist_ok=True)
            shutil.copyfile(source, target)
        return f'{match.group(1)}="{copied[source]}"'

    return _FILE_ATTRIBUTE.sub(replace, text)


def _resolve(name: str, subdirs: dict[str, str], xml_dirs: list[Path]) -> Path | None:
    path = Path(name)
    if path.is_absolute():
        return path if path.is_file() else None
    for base in xml_dirs:
        for sub in ("", *subdirs.values()):
            candidate = (base / sub / path).resolve()
            if candidate.is_file():
                return candidate
    return None


def _explicit_inertials(text: str, model: Any) -> str:
    """Every body's compiled mass and inertia as its `<inertial>` (bodies are numbered in the
    order the XML lists them)."""
    root = ElementTree.fromstring(text)
    compiler = root.find("compiler")
    if compiler is None:
        compiler = ElementTree.Element("compiler")
        root.insert(0, compiler)
    compiler.set("inertiafromgeom", "false")
    worldbody = root.find("worldbody")
    bodies = [] if worldbody is None else list(worldbody.iter("body"))
    for body_id, body in enumerate(bodies, start=1):
        for old in body.findall("inertial"):
            body.remove(old)
        inertial = ElementTree.Element("inertial", {
            "pos": _numbers(model.body_ipos[body_id]),
            "quat": _numbers(model.body_iquat[body_id]),
            "mass": _numbers([model.body_mass[body_id]]),
            "diaginertia": _numbers(model.body_inertia[body_id]),
        })
        body.insert(0, inertial)
    return ElementTree.tostring(root, encoding="unicode")


def _numbers(values: Any) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(values).ravel())


_OPTION_NAMES = {
    "integrator": ("Euler", "RK4", "implicit", "implicitfast"),
    "cone": ("pyramidal", "elliptic"),
    "jacobian": ("dense", "sparse", "auto"),
    "solver": ("PGS", "CG", "Newton"),
}
_OPTION_NUMBERS = (
    "timestep", "gravity", "wind", "magnetic", "density", "viscosity", "impratio", "tolerance",
    "ls_tolerance", "noslip_tolerance", "ccd_tolerance", "iterations", "ls_iterations",
    "noslip_iterations", "ccd_iterations",
)


def _explicit_options(text: str, model: Any) -> str:
    """Every option the model compiled to, as an attribute of `<option>`."""
    root = ElementTree.fromstring(text)
    option = root.find("option")
    if option is None:
        option = ElementTree.Element("option")
        root.insert(1, option)
    for field in _OPTION_NUMBERS:
        if hasattr(model.opt, field):
            value = np.atleast_1d(np.asarray(getattr(model.opt, field)))
            integer = np.issubdtype(value.dtype, np.integer)
            option.set(field, " ".join(str(int(v)) if integer else repr(float(v)) for v in value))
    for field, labels in _OPTION_NAMES.items():
        index = int(getattr(model.opt, field))
        if index < len(labels):
            option.set(field, labels[index])
    return ElementTree.tostring(root, encoding="unicode")
