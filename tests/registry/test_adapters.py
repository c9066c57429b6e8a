"""`seq deploy` of adapters, and `seq adapter ls / show / pull / check / rm`."""

from __future__ import annotations

import re
import textwrap

import pytest
from conftest import run_cli
from typer.testing import CliRunner

import seq
from seq.cli.adapter import app as adapter_app
from seq.record.arguments import EvalArguments
from seq.record.lease import Lease
from seq.record.manifest import AdapterPin, Manifest, Pinned, SeqBuild
from seq.record.store import RUNNING, Store

ADAPTER = textwrap.dedent('''
    """Bridge a benchmark's 64x64 'pixels' to a policy that takes 'image' at 32x32."""
    import math

    import numpy as np

    import seq
    from seq.tf import rename


    @seq.adapter(name="to-policy")
    class ToPolicy(seq.Adapter):
        observation_spec = {"pixels": ((64, 64, 3), "uint8"), "state": (2,)}
        action_spec = (1,)

        def __init__(self, *, image_size: int = 32, steps_per_query: int = 1):
            self.obs_transforms = [
                rename({"pixels": "image"}),
                seq.tf.resize("image", (64, 64), (image_size, image_size),
                              lossy=f"the policy takes {image_size}x{image_size}"),
            ]
            self.action_transforms = [seq.tf.scale(np.array([math.pi / math.pi]))]
''')

DROPPER = textwrap.dedent('''
    import numpy as np

    import seq


    class DropState(seq.tf.Transform):
        """Claims lossless, but its inverse cannot know the state it dropped."""

        label = seq.tf.lossless

        def apply(self, obs):
            return {k: v for k, v in obs.items() if k != "state"}

        def inverse(self, obs):
            return {**obs, "state": np.zeros(2)}


    @seq.adapter
    class Dropper(seq.Adapter):
        observation_spec = {"pixels": ((64, 64, 3), "uint8"), "state": (2,)}
        obs_transforms = [seq.tf.rename("pixels", "image"), DropState()]
''')


@pytest.fixture
def adapter_file(tmp_path):
    path = tmp_path / "to_policy.py"
    path.write_bytes(ADAPTER.encode())
    return path


def _cli(*args: str):
    return CliRunner().invoke(adapter_app, list(args), catch_exceptions=True)


def test_register_show_pull_and_same_file_same_version(adapter_file, tmp_path):
    (first,) = seq.deploy(adapter_file)
    assert (first.kind, first.version.label, first.created) == ("adapter", "to-policy@v1", True)
    (again,) = seq.deploy(adapter_file)
    assert again.version.label == "to-policy@v1" and not again.created
    shown = seq.show_adapter("to-policy@v1")
    assert shown["lossy"] is True
    assert shown["lossy_transforms"] == [
        {
            "where": "obs_transforms[1]",
            "transform": "resize('image', 64x64 → 32x32, bilinear)",
            "reason": "the policy takes 32x32",
        }
    ]
    assert [e["lossy"] for e in shown["obs_transforms"]] == [False, True]
    assert shown["parameters"]["image_size"] == {"type": "int", "default": 32}
    assert seq.adapter_source("to-policy", 1).encode() == adapter_file.read_bytes()
    pulled = tmp_path / "pulled.py"
    result = _cli("pull", "to-policy@v1", "--output", str(pulled))
    assert result.exit_code == 0, result.output
    assert pulled.read_bytes() == adapter_file.read_bytes()
    stdout = CliRunner().invoke(adapter_app, ["pull", "to-policy", "-o", "-"])
    assert stdout.stdout_bytes == adapter_file.read_bytes()


def test_the_cli_prints_the_version_and_the_same_one_again(adapter_file):
    for _ in range(2):
        result = run_cli("deploy", str(adapter_file))
        assert result.returncode == 0, result.stderr
        assert "to-policy@v1  (adapter" in result.stdout


def test_a_changed_file_is_the_next_number_and_numbers_survive_rm(adapter_file):
    seq.deploy(adapter_file)
    adapter_file.write_text(ADAPTER + "\n# changed\n")
    (changed,) = seq.deploy(adapter_file)
    assert changed.version.label == "to-policy@v2"
    assert [row["version"] for row in seq.adapters()] == [2]
    assert seq.remove_adapter("to-policy") == 2
    assert seq.adapters() == []
    with pytest.raises(seq.SeqInputError, match="removed"):
        seq.adapter_source("to-policy", 1)
    adapter_file.write_text(ADAPTER)
    (back,) = seq.deploy(adapter_file)
    assert back.version.label == "to-policy@v3"


def test_a_lossless_claim_that_drops_information_is_refused_naming_it(tmp_path):
    path = tmp_path / "dropper.py"
    path.write_text(DROPPER)
    with pytest.raises(seq.SeqInputError) as refused:
        seq.deploy(path)
    message = str(refused.value)
    assert (
        "obs_transforms[1] DropState" in message and "labelled lossless" in message and "'state'" in message
    )
    assert Store().versions("adapter") == []


@pytest.mark.parametrize(
    ("source", "named"),
    [
        ("import torch\n", "'torch'"),
        ("from PIL import Image\n", "'PIL'"),
        ("from . import helpers\n", "'.helpers'"),
        ("import seq.eval\n", "'seq.eval'"),
        ("from seq import deploy\n", "'seq.deploy'"),
        ("def f():\n    import scipy.ndimage\n", "'scipy.ndimage'"),
    ],
)
def test_an_import_beyond_numpy_seq_tf_and_the_standard_library_is_refused(tmp_path, source, named):
    path = tmp_path / "imports.py"
    path.write_text("import json\nimport numpy.linalg\nimport seq\n" + source + ADAPTER)
    with pytest.raises(
        seq.SeqInputError, match="may import only numpy, seq.tf and the standard library"
    ) as refused:
        seq.deploy(path)
    assert named in str(refused.value) and str(path) in str(refused.value)


def test_seq_beyond_adapter_and_tf_is_refused_and_the_size_is_bounded(tmp_path):
    path = tmp_path / "uses_eval.py"
    path.write_text(ADAPTER + "\nRUN = seq.eval\n")
    with pytest.raises(seq.SeqInputError, match="uses seq.eval"):
        seq.deploy(path)
    path.write_text(ADAPTER + "\n" + "#" * (256 * 1024) + "\n")
    with pytest.raises(seq.SeqInputError, match="at most 256 KB"):
        seq.deploy(path)


def test_refused_adapters_say_why(tmp_path):
    cases = [
        ("class A(seq.Adapter):\n    obs_transforms = [lambda x: x]\n", "obs_transforms[0]"),
        (
            "class A(seq.Adapter):\n    def transform_obs(self, obs):\n        return obs\n",
            "cannot be overridden",
        ),
        ("class A(seq.Adapter):\n    def __init__(self, *, size=None):\n        pass\n", "'size'"),
        ("class A:\n    pass\n", "must subclass seq.Adapter"),
    ]
    for index, (body, fragment) in enumerate(cases):
        path = tmp_path / f"refused_{index}.py"
        path.write_text("import seq\n\n@seq.adapter\n" + body)
        with pytest.raises(seq.SeqInputError, match=re.escape(fragment)):
            seq.deploy(path)


def test_check_a_file_and_a_registered_version(adapter_file, tmp_path):
    assert seq.check_adapter(adapter_file) == [{"name": "to-policy", "label": "to-policy", "lossy": True}]
    seq.deploy(adapter_file)
    assert seq.check_adapter("to-policy@v1")[0]["label"] == "to-policy@v1"
    result = _cli("check", "to-policy")
    assert result.exit_code == 0 and "to-policy@v1: ok (lossy" in result.output
    bad = tmp_path / "dropper.py"
    bad.write_text(DROPPER)
    with pytest.raises(seq.SeqInputError, match="DropState"):
        seq.check_adapter(bad)


def test_ls_and_show_on_the_command_line(adapter_file):
    seq.deploy(adapter_file)
    listed = _cli("ls")
    assert listed.exit_code == 0 and "to-policy" in listed.output and "yes (1)" in listed.output
    assert "first names them:\n  libero-to-lerobot, libero-to-openpi" in listed.output
    shown = _cli("show", "to-policy")
    assert shown.exit_code == 0
    assert "lossy: yes" in shown.output and "the policy takes 32x32" in shown.output
    assert "rename('pixels'→'image')  — lossless" in shown.output
    unknown = _cli("show", "to-polcy")
    assert isinstance(unknown.exception, seq.SeqInputError) and "Did you mean 'to-policy'" in str(
        unknown.exception
    )


def test_rm_is_refused_while_a_running_eval_holds_the_adapter(adapter_file, toy_file):
    seq.deploy(adapter_file)
    seq.deploy(toy_file)
    store = Store()
    (policy,) = store.versions("policy", "line-controller")
    (benchmark,) = store.versions("benchmark", "line")
    manifest = Manifest(
        seq=SeqBuild(seq.__version__),
        benchmark=Pinned(benchmark.name, benchmark.version, benchmark.sha256),
        policy=Pinned(policy.name, policy.version, policy.sha256),
        adapter=AdapterPin("to-policy", 1, "0" * 64, "to-policy@v1"),
    )
    arguments = EvalArguments(benchmark=benchmark.label, adapter="to-policy@v1")
    store.create_eval("ev-holding", policy, benchmark, arguments, manifest, [])
    store.set_eval_status("ev-holding", RUNNING)
    with Lease.acquire(store.path, "ev-holding"):  # this process is its runner: alive
        with pytest.raises(seq.SeqInputError, match="in use by running eval"):
            seq.remove_adapter("to-policy")
    store.set_eval_status("ev-holding", "completed")
    assert seq.remove_adapter("to-policy") == 1


def test_adapter_parameters_and_the_shared_steps_per_query():
    from seq.authoring.adapter import adapter_spec_of, resolve_with_adapter
    from seq.authoring.params import Parameter

    sides = {
        "policy": {"noise": Parameter("noise", "float", 0.0)},
        "eval": {"steps_per_query": Parameter("steps_per_query", "int", None)},
    }

    @seq.adapter(name="shares")
    class Shares(seq.Adapter):
        def __init__(self, *, image_size: int = 224, steps_per_query: int = 5):
            pass

    spec = adapter_spec_of(Shares)
    values = resolve_with_adapter({"adapter.image_size": "192"}, sides, spec)
    assert values["adapter"] == {"image_size": 192, "steps_per_query": 5}
    assert values["eval"]["steps_per_query"] == 5  # the adapter's default, handed back to it
    for given in (
        {"steps_per_query": "10"},
        {"eval.steps_per_query": "10"},
        {"adapter.steps_per_query": "10"},
    ):
        values = resolve_with_adapter(given, sides, spec)
        assert values["eval"]["steps_per_query"] == values["adapter"]["steps_per_query"] == 10
    with pytest.raises(seq.SeqInputError, match="adapter.image_size"):
        resolve_with_adapter({"adapter.size": "1"}, sides, spec)
    with pytest.raises(seq.SeqInputError, match="expects int"):
        resolve_with_adapter({"image_size": "big"}, sides, spec)
    assert resolve_with_adapter({}, sides, None)["eval"]["steps_per_query"] is None
