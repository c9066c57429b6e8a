"""The Python environment a worker reports for the eval's manifest: the tracked distributions'
versions read as `importlib.metadata` reads them, without importing it."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import seq
from seq.engine.environment import TRACKED, describe_environment, installed_versions


def _as_importlib_reads(names: list[str]) -> dict[str, str]:
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def test_every_installed_distribution_reads_as_importlib_metadata_reads_it():
    names = sorted({dist.metadata["Name"] for dist in metadata.distributions()})
    assert len(names) > 20  # this environment's, seq's extras among them
    spelled_otherwise = [name.upper().replace("-", ".") for name in names]  # PEP 503 normalization
    assert installed_versions(names) == _as_importlib_reads(names)
    assert installed_versions(spelled_otherwise) == _as_importlib_reads(spelled_otherwise)
    assert installed_versions(["no-such-distribution-here"]) == {}


def test_the_first_folder_on_the_path_wins_and_an_egg_info_counts(tmp_path: Path, monkeypatch):
    shadowing = tmp_path / "first" / "numpy-0.0.1.dist-info"
    shadowing.mkdir(parents=True)
    (shadowing / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 0.0.1\n")
    legacy = tmp_path / "second" / "legacy_thing.egg-info"
    legacy.mkdir(parents=True)
    (legacy / "PKG-INFO").write_text("Name: legacy-thing\nVersion: 7.2\n\nVersion: 9 (the body)\n")
    monkeypatch.setattr(sys, "path", [str(shadowing.parent), str(legacy.parent), *sys.path])
    names = ["numpy", "legacy-thing"]
    expected = {"numpy": "0.0.1", "legacy-thing": "7.2"}
    assert installed_versions(names) == _as_importlib_reads(names) == expected


def test_an_evals_manifest_holds_its_workers_environment(toy_file: Path):
    seq.deploy(toy_file)
    report = seq.eval.run("line-controller", benchmark="line", envs=2)
    environment = seq.Store().get_eval(report.eval_id).manifest.environment
    assert environment is not None
    assert environment.packages == _as_importlib_reads(list(TRACKED))
    assert environment.python == describe_environment()["python"] and environment.platform


def test_an_egg_on_the_path_counts_as_importlib_metadata_counts_it(tmp_path: Path, monkeypatch):
    # `setup.py install` left an `.egg` folder, put on sys.path by easy-install.pth
    egg = tmp_path / "robosuite-1.4.1-py3.11.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: robosuite\nVersion: 1.4.1\n")
    monkeypatch.setattr(sys, "path", [str(egg), *sys.path])
    assert installed_versions(["robosuite"]) == _as_importlib_reads(["robosuite"]) == {"robosuite": "1.4.1"}
