"""`seq.secret`, the Python twin of `seq secret`: set (from a value or the environment), list
(never a value), remove."""

from __future__ import annotations

import pytest

import seq


def test_set_ls_and_rm(monkeypatch: pytest.MonkeyPatch) -> None:
    seq.secret.set("hub", env="HUB_TOKEN", value="s3cret")
    monkeypatch.setenv("SIM_KEY", "from-the-environment")
    seq.secret.set("sim", env="SIM_KEY")
    listed = seq.secret.ls()
    assert [(info.name, info.env) for info in listed] == [("hub", "HUB_TOKEN"), ("sim", "SIM_KEY")]
    assert "s3cret" not in repr(listed) and "from-the-environment" not in repr(listed)
    from seq.isolation.secrets import secret_environment

    assert secret_environment(["hub", "sim"]) == {"HUB_TOKEN": "s3cret", "SIM_KEY": "from-the-environment"}
    seq.secret.rm("hub")
    assert [info.name for info in seq.secret.ls()] == ["sim"]
    monkeypatch.delenv("NOT_SET_HERE", raising=False)
    with pytest.raises(seq.SeqInputError, match="no value"):
        seq.secret.set("empty", env="NOT_SET_HERE")
    with pytest.raises(seq.SeqInputError, match="environment variable"):
        seq.secret.set("bad", env="1-not-a-variable", value="x")
