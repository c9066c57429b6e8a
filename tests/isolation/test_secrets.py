"""Secrets: stored 0600, never listed with their value, and masked by `Masker`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections import namedtuple

import pytest
from conftest import refused_in_one_line, run_cli

from seq.errors import SeqInputError
from seq.isolation.secrets import Masker, list_secrets, remove_secret, secret_environment, set_secret

VALUE = "s3cr3t-token-value"


def _cli(*args, stdin=subprocess.DEVNULL, input=None, env=None):
    return subprocess.run(
        [sys.executable, "-c", "from seq.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=None if input is not None else stdin,
        input=input,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def test_a_secret_is_stored_0600_in_a_0700_folder(seq_home):
    set_secret("hf", "HF_TOKEN", VALUE)
    path = seq_home / "secrets" / "hf.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    record = json.loads(path.read_text())
    assert record["name"] == "hf" and record["env"] == "HF_TOKEN" and record["value"] == VALUE
    assert record["set_at"]
    assert not [p for p in path.parent.iterdir() if p.name != "hf.json"]


def test_list_environment_and_remove():
    set_secret("hf", "HF_TOKEN", VALUE)
    set_secret("sim", "SIM_KEY", "other")
    set_secret("sim", "SIM_KEY", "replaced")
    listed = list_secrets()
    assert [(s.name, s.env) for s in listed] == [("hf", "HF_TOKEN"), ("sim", "SIM_KEY")]
    assert VALUE not in repr(listed) and not hasattr(listed[0], "value")
    assert secret_environment(["hf", "sim"]) == {"HF_TOKEN": VALUE, "SIM_KEY": "replaced"}
    remove_secret("sim")
    assert [s.name for s in list_secrets()] == ["hf"]
    with pytest.raises(SeqInputError, match=r"secret sim: not set \(seq secret set sim --env VAR\)"):
        secret_environment(["sim"])
    with pytest.raises(SeqInputError, match="secret sim: not set"):
        remove_secret("sim")


def test_two_secrets_for_one_variable_arerefused_in_one_line():
    set_secret("a", "TOKEN", "one")
    set_secret("b", "TOKEN", "two")
    with pytest.raises(SeqInputError, match="secrets a and b both set TOKEN"):
        secret_environment(["a", "b"])


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("a/b", "VAR", "x"), "secret name 'a/b'"),
        (("ok", "1VAR", "x"), "environment variable '1VAR'"),
        (("ok", "MY-VAR", "x"), "environment variable 'MY-VAR'"),
        (("ok", "VAR", ""), "the value is empty"),
    ],
)
def test_bad_input(args, fragment):
    with pytest.raises(SeqInputError, match=fragment):
        set_secret(*args)


def test_the_value_comes_from_stdin(seq_home):
    result = _cli(
        "secret", "set", "hf", "--env", "HF_TOKEN", input=VALUE + "\n", env={"HF_TOKEN": "not-this"}
    )
    assert result.returncode == 0, result.stderr
    assert VALUE not in result.stdout + result.stderr
    assert "from stdin" in result.stdout
    assert secret_environment(["hf"]) == {"HF_TOKEN": VALUE}


def test_the_value_comes_from_the_environment():
    result = _cli("secret", "set", "hf", "--env", "HF_TOKEN", env={"HF_TOKEN": VALUE})
    assert result.returncode == 0, result.stderr
    assert VALUE not in result.stdout + result.stderr
    assert "from the environment variable HF_TOKEN" in result.stdout
    assert secret_environment(["hf"]) == {"HF_TOKEN": VALUE}


def test_ls_never_shows_the_value_and_rm_removes():
    set_secret("hf", "HF_TOKEN", VALUE)
    listed = run_cli("secret", "ls")
    assert listed.returncode == 0, listed.stderr
    assert "hf" in listed.stdout and "HF_TOKEN" in listed.stdout and VALUE not in listed.stdout
    as_json = run_cli("secret", "ls", "--json")
    assert VALUE not in as_json.stdout and json.loads(as_json.stdout)[0]["env"] == "HF_TOKEN"
    removed = run_cli("secret", "rm", "hf")
    assert removed.returncode == 0 and list_secrets() == []


def test_the_command_line_refuses_bad_input():
    env = {"HF_TOKEN": ""}
    refused_in_one_line(_cli("secret", "set", "hf", "--env", "HF_TOKEN", env=env), "secret hf: no value")
    refused_in_one_line(_cli("secret", "set", "hf", "--env", "1X", env=env), "environment variable '1X'")
    refused_in_one_line(_cli("secret", "set", "a/b", "--env", "X", input="v"), "secret name 'a/b'")
    refused_in_one_line(_cli("secret", "rm", "nope"), "secret nope: not set")


def test_masker_on_nested_values():
    masker = Masker(["abc", "abcdef", ""])
    assert masker and not Masker([]) and not Masker([""])
    assert masker.text(None) is None
    assert masker.text("x abcdef y abc z") == "x *** y *** z"  # longest first: not "***def"
    Point = namedtuple("Point", "x y")
    nested = {
        "abc-key": ["token abcdef", ("abc", 3, None)],
        "n": 1.5,
        "p": Point("abc", b"abc"),
        "deep": {"list": [{"k": "abcabc"}]},
    }
    assert masker.value(nested) == {
        "***-key": ["token ***", ("***", 3, None)],
        "n": 1.5,
        "p": Point("***", b"abc"),
        "deep": {"list": [{"k": "******"}]},
    }
    assert isinstance(masker.value(nested)["p"], Point)
    assert masker.value(7) == 7 and Masker([]).value(nested) is nested
    assert masker.text("a.c") == "a.c"  # values are literal, not patterns
