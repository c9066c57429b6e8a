"""In an activated virtual environment our `seq` comes first on PATH: a command line in coreutils'
form (`seq 1 60`, `seq -w 8 10`, `seq -s , 3`) runs the system's `seq`, so shell loops keep working."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import run_cli

COREUTILS = shutil.which("seq", path="/usr/bin:/bin")
pytestmark = pytest.mark.skipif(COREUTILS is None, reason="this machine has no coreutils seq")


@pytest.mark.parametrize(
    ("args", "printed"),
    [
        (["3"], "1\n2\n3\n"),
        (["1", "3"], "1\n2\n3\n"),
        (["0", "5", "10"], "0\n5\n10\n"),
        (["-w", "8", "10"], "08\n09\n10\n"),
        (["-s", ",", "1", "3"], "1,2,3\n"),
        (["-f", "%.1f", "1", "2"], "1.0\n2.0\n"),
        (["--", "-1", "1"], "-1\n0\n1\n"),
        (["1.5", "0.5", "2.5"], "1.5\n2.0\n2.5\n"),
    ],
)
def test_coreutils_form_prints_what_coreutils_prints(args, printed):
    result = run_cli(*args)
    assert (result.returncode, result.stdout, result.stderr) == (0, printed, "")
    assert subprocess.run([COREUTILS, *args], capture_output=True, text=True).stdout == printed


def test_a_coreutils_error_keeps_coreutils_exit_code():
    result = run_cli("1", "0", "3")
    assert result.returncode == 1 and "Zero increment" in result.stderr


@pytest.mark.parametrize("args", [["eval", "ls"], ["1", "eval"], ["-w"]])
def test_our_commands_and_other_words_stay_ours(args):
    result = run_cli(*args)
    assert "Zero increment" not in result.stderr and "seq: missing operand" not in result.stderr


def test_a_shell_loop_in_an_activated_environment(tmp_path):
    """Our entry point first on PATH, as `source .venv/bin/activate` puts it; the loop still counts."""
    bin_dir = tmp_path / "venv-bin"
    bin_dir.mkdir()
    entry = bin_dir / "seq"
    entry.write_text(
        f"#!{sys.executable}\nimport re\nimport sys\nfrom seq.cli import main\n"
        "if __name__ == '__main__':\n    sys.exit(main())\n"
    )
    entry.chmod(0o755)
    environment = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    loop = subprocess.run(
        ["bash", "-c", 'for i in $(seq 1 60); do n=$i; done; echo "$n"; seq --version'],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert loop.returncode == 0, loop.stderr
    assert loop.stdout.splitlines()[0] == "60"
    assert loop.stdout.splitlines()[1].startswith("seq ")  # `seq --version` is still ours
