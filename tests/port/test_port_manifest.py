"""A broken `export.json` is refused in one sentence naming the file and the key, by every
command that reads it, before the port environment starts (no Warp needed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import refused_in_one_line, run_cli

COMMANDS = (("check-model",), ("scaffold",), ("compare", "--replay"))


def _broken(scene: Path, tmp_path: Path, text: str) -> Path:
    copy = tmp_path / "scene"
    shutil.copytree(scene, copy)
    (copy / "export.json").write_text(text)
    return copy


def _edited(scene: Path, edit: Any) -> str:
    manifest = json.loads((scene / "export.json").read_text())
    edit(manifest)
    return json.dumps(manifest)


@pytest.mark.parametrize(("text", "said"), [
    ('{"format": 1}', "benchmark: expected a benchmark's name, got nothing"),
    ("not json", "not JSON"),
    ("[1]", "expected a JSON object, got list"),
    ('{"format": 1, "benchmark": "b", "mujoco": "3", "steps": 5, "scenes": [{"name": "../../etc"}], '
     '"starts": []}', "scenes[0].id: expected a folder name"),
])
def test_a_broken_manifest_is_refused_by_every_command(
    ball_scene: Path, tmp_path: Path, text: str, said: str
) -> None:
    folder = _broken(ball_scene, tmp_path, text)
    for command in COMMANDS:
        refused_in_one_line(run_cli("benchmark", *command, str(folder)), f"{folder}/export.json", said)


def _set(path: str, value: Any) -> Any:
    def edit(manifest: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = manifest
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[last] = value
    return edit


@pytest.mark.parametrize(("edit", "said"), [
    (_set("scenes.0.id", "../../etc"), "scenes[0].id: expected a folder name (no '/', not '..')"),
    (_set("scenes.0.id", "s9"), "scenes[0]: no scenes/s9/scene.xml in the folder"),
    (_set("starts.1.file", "starts/../../x.npz"), "starts[1].file: expected starts/NAME.npz"),
    (_set("starts.0.file", "starts/gone.npz"), "starts[0].file: no starts/gone.npz in the folder"),
    (_set("starts.2.seed", "two"), "starts[2].seed: expected a whole number, got 'two'"),
    (_set("starts.0.scene", "s1"), "starts[0].scene: expected one of the scenes ['s0'], got 's1'"),
    (_set("starts.0.facts", [1]), "starts[0].facts: expected an object, got [1]"),
    (_set("steps", -3), "steps: expected a whole number of 1 or more, got -3"),
    (_set("engine", "bullet"), "engine: expected one of ['mujoco', 'sapien'], got 'bullet'"),
    (_set("scenes", {}), "scenes: expected a list of objects, got {}"),
    (_set("starts.0.contacts", 10**7), "starts[0].contacts: expected 0 to 100,000 contacts at a start"),
    (_set("mujoco", '3.3.0\n"""\nimport os'), "mujoco: expected a version, such as 3.3.0"),
    (_set("benchmark", 'ball"""'), "benchmark: expected a benchmark's name"),
])
def test_a_key_that_is_not_what_the_export_writes_is_named(
    ball_scene: Path, tmp_path: Path, edit: Any, said: str
) -> None:
    folder = _broken(ball_scene, tmp_path, _edited(ball_scene, edit))
    refused_in_one_line(run_cli("benchmark", "check-model", str(folder)), f"{folder}/export.json", said)


def test_a_broken_port_scene_is_refused_too(ball_scene: Path, tmp_path: Path) -> None:
    port = _broken(ball_scene, tmp_path, '{"format": 1, "benchmark": "ball"}')
    refused_in_one_line(run_cli("benchmark", "compare", "--replay", str(ball_scene), str(port)),
                        f"{port}/export.json", "mujoco: expected a version, such as 3.3.0, got nothing")


def _start_edited(scene: Path, tmp_path: Path, change: Any) -> Path:
    """A copy of `scene` whose first start's arrays are `change`d (a dict of them, in place)."""
    copy = tmp_path / "scene"
    shutil.copytree(scene, copy)
    path = copy / "starts" / "drop__0.npz"
    with np.load(path) as loaded:
        arrays = {key: loaded[key] for key in loaded.files}
    change(arrays)
    np.savez(path, **arrays)
    return copy


@pytest.mark.parametrize(("change", "said"), [
    (lambda a: a.update({"state.qpos": a["state.qpos"] * np.nan}),
     "state.qpos: holds a number that is not finite"),
    (lambda a: a.update({"state.qpos": a["state.qpos"][:3]}),
     "state.qpos: expected 7 numbers for this scene, got 3"),
    (lambda a: a.update({"model.body_mass": np.ones(1), "rows.body_mass": np.array([99])}),
     "rows.body_mass: expected distinct rows from 0 to 1, got [99]"),
    (lambda a: a.update({"model.body_mass": np.ones(1)}), "no rows.body_mass"),
    (lambda a: a.update({"model.nope": np.ones(1), "rows.nope": np.array([0])}), "model.nope: not a field"),
    (lambda a: a.pop("ctrl"), "no ctrl"),
    (lambda a: a.update({"ctrl": a["ctrl"][:5]}), "ctrl: expected 20 steps of [0], got shape [5, 0]"),
])
def test_a_start_whose_arrays_are_not_what_the_export_writes_is_named(
    ball_scene: Path, tmp_path: Path, change: Any, said: str
) -> None:
    folder = _start_edited(ball_scene, tmp_path, change)
    refused_in_one_line(run_cli("benchmark", "compare", "--replay", str(folder), timeout=900),
                        f"{folder}/starts/drop__0.npz", said)


def test_what_an_export_folder_holds_stays_inside_it(ball_scene: Path, tmp_path: Path) -> None:
    """A start that is not a zip, a symbolic link, and a scene naming a file outside its folder."""
    folder = _broken(ball_scene, tmp_path, (ball_scene / "export.json").read_text())
    (folder / "starts" / "drop__0.npz").write_bytes(b"not a zip")
    refused_in_one_line(run_cli("benchmark", "compare", "--replay", str(folder), timeout=900),
                        f"{folder}/starts/drop__0.npz: not a start's arrays")
    (folder / "starts" / "drop__0.npz").unlink()
    (folder / "starts" / "drop__0.npz").symlink_to(ball_scene / "starts" / "drop__0.npz")
    for command in COMMANDS:
        refused_in_one_line(run_cli("benchmark", *command, str(folder)),
                            f"{folder}: starts/drop__0.npz is a symbolic link")
    shutil.copy(ball_scene / "starts" / "drop__0.npz", folder / "starts" / "drop__1.npz")
    (folder / "starts" / "drop__0.npz").unlink()
    shutil.copy(ball_scene / "starts" / "drop__0.npz", folder / "starts" / "drop__0.npz")
    xml = folder / "scenes" / "s0" / "scene.xml"
    xml.write_text(xml.read_text().replace("<worldbody>", '<include file="/etc/hostname"/>\n<worldbody>', 1))
    refused_in_one_line(run_cli("benchmark", "check-model", str(folder), timeout=900),
                        f"{xml}: <include file='/etc/hostname'>: a scene's files are inside its folder")
