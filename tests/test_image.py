"""`seq.image`, the Python twin of `seq image`: build a benchmark's image, list it, remove it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import seq

BENCH = textwrap.dedent("""
    import seq

    @seq.benchmark(
        name="imaged",
        conditions=[seq.Condition(task="a", seed=0)],
        image=seq.Image.debian_slim().env({"SEQ_TWIN_TEST": "on"}),
    )
    class Imaged(seq.Benchmark):
        @seq.reset
        def reset(self, seed, variant):
            return None

        @seq.check
        def check(self, env):
            return seq.Step(done=True)
""")


@pytest.fixture(autouse=True)
def images_in_seq_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """Built and removed in this test's own SEQ_HOME, not the session's shared cache."""
    monkeypatch.delenv("SEQ_IMAGES", raising=False)


def test_build_ls_and_rm(tmp_path: Path, seq_home: Path) -> None:
    source = tmp_path / "imaged.py"
    source.write_text(BENCH)
    seq.deploy(source, check=False)  # a placeholder benchmark: its reset builds no env
    lines: list[str] = []
    built = seq.image.build("imaged", log=lines.append)
    assert not built.cached and lines and built.path.parent == seq_home / "images"
    assert seq.image.build("imaged@v1").cached
    assert [info.key for info in seq.image.ls()] == [built.key]
    assert seq.image.rm(built.key[:6]) == [built.key]
    assert seq.image.ls() == []
    with pytest.raises(seq.SeqInputError, match="declares no image"):
        seq.image.build("metaworld")
    with pytest.raises(seq.SeqInputError, match="KEY"):
        seq.image.rm()
    assert seq.image.rm(all=True) == []
