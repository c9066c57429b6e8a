"""Policy resources as an eval honours them: `weights=` mounted read-only and handed to `@seq.load`
as `weights_dir` (inline in workers, and served), `gpu=`/`max_gpus=` recorded with the version and
checked before an eval like a benchmark's card."""

from __future__ import annotations

import json
import os
import textwrap

import pytest
from conftest import TOY, refused_in_one_line, run_cli

import seq

WEIGHTED = (
    TOY
    + textwrap.dedent(
        '''

    @seq.policy(name="weighted", weights=seq.Volume.from_name("line-weights"))
    class Weighted(seq.Policy):
        """Moves by the step its weights file holds; says where the weights were and whether they
        could be written."""

        @seq.load
        def load(self, weights_dir):
            self.step = json.loads((weights_dir / "weights.json").read_text())["step"]
            try:
                (weights_dir / "tampered").write_text("no")
                written = "written"
            except OSError as error:
                written = errno.errorcode.get(error.errno, str(error.errno))
            with open(os.environ["WEIGHTS_PROBE"], "a") as probe:
                probe.write(json.dumps({"dir": str(weights_dir), "write": written}) + "\\n")

        @seq.infer
        def infer(self, obs, *, seed=None, instruction=None):
            return np.array([np.clip(obs[1] - obs[0], -self.step, self.step)])


    @seq.policy(name="on-a-card", gpu="RTX-PRO-6000", max_gpus=2)
    class OnACard(LineController):
        pass
    '''
    )
).replace("import os\n", "import errno\nimport json\nimport os\n", 1)


@pytest.fixture
def weighted(tmp_path, monkeypatch):
    folder = tmp_path / "weights"
    folder.mkdir()
    (folder / "weights.json").write_text(json.dumps({"step": 0.05}))
    volume, _ = seq.volume.put("line-weights", folder, kind="weights")
    path = tmp_path / "weighted.py"
    path.write_text(WEIGHTED)
    seq.deploy(path)
    probe = tmp_path / "probe.jsonl"
    monkeypatch.setenv("WEIGHTS_PROBE", str(probe))
    return volume, probe


def _probes(probe):
    return [json.loads(line) for line in probe.read_text().splitlines()]


def _mount_points() -> set[str]:
    with open("/proc/self/mountinfo") as handle:
        return {line.split()[4] for line in handle}


def _namespaces_work() -> bool:
    import subprocess

    if os.geteuid() != 0:
        return False
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def test_weights_reach_load_read_only_in_workers(weighted):
    volume, probe = weighted
    mounts = _mount_points()
    report = seq.eval.run("weighted", benchmark="line", seeds=[0], envs=1, trajectories=True)
    assert [e.status for e in report.episodes] == ["ok", "ok"], report.episodes[0].error
    assert all(e.steps > 10 for e in report.episodes)  # 0.05 a step: the weights were read
    (seen,) = _probes(probe)
    assert seen["dir"] == str(volume.path)
    if _namespaces_work():  # a mount namespace: not even root writes to them
        assert seen["write"] == "EROFS"
    elif os.geteuid() != 0:  # read-only by file mode
        assert seen["write"] == "EACCES"
    assert not (volume.path / "tampered").exists()
    assert _mount_points() == mounts  # the worker's mount stayed its own
    assert sorted(p.name for p in volume.path.iterdir()) == ["weights.json"]


def test_a_served_policy_gets_its_weights_too(weighted):
    volume, probe = weighted
    report = seq.eval.run("weighted", benchmark="line", seeds=[0], serve=True)
    assert [e.status for e in report.episodes] == ["ok", "ok"]
    assert _probes(probe)[0]["dir"] == str(volume.path)
    if os.path.exists(volume.path / "tampered"):  # root in this process: file modes do not hold it
        os.chmod(volume.path, 0o755)
        (volume.path / "tampered").unlink()
        os.chmod(volume.path, 0o555)


def test_weights_not_put_refuse_the_eval(tmp_path):
    path = tmp_path / "weighted.py"
    path.write_text(WEIGHTED)
    seq.deploy(path)
    with pytest.raises(seq.SeqInputError, match=r"policy weighted declares weights='line-weights': volume"):
        seq.eval.run("weighted", benchmark="line", seeds=[0])


def test_a_policy_card_is_recorded_and_checked(tmp_path):
    path = tmp_path / "weighted.py"
    path.write_text(WEIGHTED)
    seq.deploy(path)
    (row,) = seq.Store().versions("policy", "on-a-card")
    assert row.declared["declared"] == {"gpu": "RTX-PRO-6000", "max_gpus": 2}
    refused_in_one_line(
        run_cli("eval", "run", "on-a-card", "--benchmark", "line", "--seeds", "0"),
        "policy on-a-card declares gpu='RTX-PRO-6000' and this machine has no such card",
        "--allow-cpu",
    )
    report = seq.eval.run("on-a-card", benchmark="line", seeds=[0], allow_cpu=True)
    assert report.status == "completed"
