"""Local images: a `seq.Image` built once with uv into SEQ_HOME, cached by the hash of its description."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli

import seq
from seq.errors import SeqInputError
from seq.isolation.images import (
    BuiltImage,
    ImageBuildError,
    ensure_image,
    image_key,
    list_images,
    remove_image,
)

SIX = seq.Image.debian_slim().uv_pip_install("six==1.16.0").env({"SEQ_TEST_FLAG": "on"})


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, BuiltImage]]:
    """One real image, built once for this module in its own SEQ_HOME."""
    home = tmp_path_factory.mktemp("images-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SEQ_HOME", str(home))
        patch.delenv("SEQ_IMAGES", raising=False)
        lines: list[str] = []
        built = ensure_image(SIX, log=lines.append)
        assert any("uv_pip_install" in line for line in lines)
    yield home, built


@pytest.fixture(autouse=True)
def images_in_seq_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests build their images where a user's go by default: `$SEQ_HOME/images`."""
    monkeypatch.delenv("SEQ_IMAGES", raising=False)


@pytest.fixture
def built(shared, monkeypatch: pytest.MonkeyPatch) -> BuiltImage:
    monkeypatch.setenv("SEQ_HOME", str(shared[0]))
    return shared[1]


def _python(built: BuiltImage, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(built.python), "-c", code], capture_output=True, text=True, timeout=120)


def test_seq_images_moves_the_image_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from seq.isolation.images import images_dir

    monkeypatch.setenv("SEQ_IMAGES", str(tmp_path / "shared-images"))
    assert images_dir() == tmp_path / "shared-images"


def test_a_built_image_has_its_packages_and_seq_but_not_the_runners_environment(built: BuiltImage) -> None:
    assert not built.cached
    assert built.path == Path(os.environ["SEQ_HOME"]) / "images" / built.key
    assert built.environment == {"SEQ_TEST_FLAG": "on"}  # returned for workers, not applied at build
    assert built.description["python"] == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert built.description["steps"] == [["uv_pip_install", ["six==1.16.0"]]]
    done = _python(built, "import six, seq.engine.worker, seq; print(six.__version__, seq.__version__)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "1.16.0"
    assert _python(built, "import pytest").returncode != 0  # the runner's packages are not copied
    meta = json.loads((built.path / "image.json").read_text())
    assert meta["description"] == built.description and meta["build_s"] > 0


def test_a_second_ensure_uses_the_cache(built: BuiltImage) -> None:
    again = ensure_image(seq.Image.debian_slim().uv_pip_install("six==1.16.0").env({"SEQ_TEST_FLAG": "on"}))
    assert again.cached and again.key == built.key and again.path == built.path
    (info,) = list_images()
    assert info.key == built.key and info.size_bytes > 0 and info.last_used >= info.built_at


def test_the_key_follows_the_description() -> None:
    base = seq.Image.debian_slim().uv_pip_install("six==1.16.0")
    assert image_key(base) == image_key(seq.Image.debian_slim().uv_pip_install("six==1.16.0"))
    keys = {
        image_key(image)
        for image in (
            base,
            seq.Image.debian_slim().uv_pip_install("six==1.17.0"),
            base.env({"A": "1"}),
            base.run_commands("true"),
            base.apt_install("libgl1"),
            seq.Image.debian_slim(python_version="3.10").uv_pip_install("six==1.16.0"),
        )
    }
    assert len(keys) == 6 and all(len(key) == 16 for key in keys)


def test_a_package_that_does_not_exist_fails_the_build_and_leaves_nothing(seq_home: Path) -> None:
    with pytest.raises(ImageBuildError) as caught:
        ensure_image(seq.Image.debian_slim().uv_pip_install("seq-no-such-package-xyz==1.0"))
    message = str(caught.value)
    assert "seq-no-such-package-xyz" in message and "uv_pip_install" in message
    assert "\n" not in message and "\x1b" not in message
    assert list_images() == []
    assert not [p for p in (seq_home / "images").iterdir() if not p.name.endswith(".lock")]


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="no dpkg on this machine")
def test_a_missing_apt_package_is_named_with_its_install_command() -> None:
    with pytest.raises(ImageBuildError) as caught:
        ensure_image(seq.Image.debian_slim().apt_install("seq-no-such-apt-package-xyz"))
    message = str(caught.value)
    assert "seq-no-such-apt-package-xyz" in message
    assert "apt-get install -y seq-no-such-apt-package-xyz" in message


def test_a_failing_command_names_itself() -> None:
    with pytest.raises(ImageBuildError, match=r'run_commands\("echo broken >&2; exit 3"\).*broken'):
        ensure_image(seq.Image.debian_slim().run_commands("echo broken >&2; exit 3"))


def test_two_processes_build_an_image_once(seq_home: Path) -> None:
    code = textwrap.dedent("""
        import seq
        from seq.isolation.images import ensure_image
        built = ensure_image(seq.Image.debian_slim().env({"SEQ_TEST": "together"}))
        print(built.cached)
    """)
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=300) for process in processes]
    assert all(process.returncode == 0 for process in processes), outputs
    assert sorted(out.strip() for out, _ in outputs) == ["False", "True"]
    assert len(list_images()) == 1


def test_the_command_line_lists_and_removes_images(seq_home: Path) -> None:
    first = ensure_image(seq.Image.debian_slim().env({"SEQ_TEST": "cli-1"}))
    second = ensure_image(seq.Image.debian_slim().env({"SEQ_TEST": "cli-2"}))
    listed = run_cli("image", "ls")
    assert listed.returncode == 0, listed.stderr
    assert first.key in listed.stdout and second.key in listed.stdout
    removed = run_cli("image", "rm", first.key[:6])
    assert removed.returncode == 0, removed.stderr
    assert [info.key for info in list_images()] == [second.key]
    assert run_cli("image", "rm", "--all").returncode == 0
    assert list_images() == []
    assert ensure_image(seq.Image.debian_slim().env({"SEQ_TEST": "cli-1"})).cached is False


def test_a_bad_key_is_one_line_and_exit_code_2() -> None:
    done = run_cli("image", "rm", "nosuchkey")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "nosuchkey" in done.stderr
    with pytest.raises(SeqInputError):
        remove_image("")


def test_building_a_benchmark_without_an_image_is_refused() -> None:
    done = run_cli("image", "build", "metaworld")
    assert done.returncode == 2 and "declares no image" in done.stderr


def test_the_command_line_builds_a_benchmarks_image(built: BuiltImage, tmp_path: Path) -> None:
    source = tmp_path / "image_bench.py"
    source.write_text(
        textwrap.dedent("""
        import seq

        @seq.benchmark(
            name="image-bench",
            conditions=[seq.Condition(task="a", seed=0)],
            image=seq.Image.debian_slim().uv_pip_install("six==1.16.0").env({"SEQ_TEST_FLAG": "on"}),
        )
        class ImageBench(seq.Benchmark):
            @seq.reset
            def reset(self, seed, variant):
                return None

            @seq.check
            def check(self, env):
                return seq.Step(done=True)
    """)
    )
    assert run_cli("deploy", str(source), "--no-check").returncode == 0  # its reset builds no env
    done = run_cli("image", "build", "image-bench")
    assert done.returncode == 0, done.stderr
    assert f"image {built.key} for image-bench@v1: already built" in done.stdout
