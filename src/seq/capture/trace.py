"""`TraceWriter`: a compact per-step trace of an episode (msgpack), and `read_trace` to read one.

What failure mining needs, and nothing heavier: the low-dimensional parts of each observation,
the action, its act seed, the reward, the env's numeric `info` (MetaWorld's `success`,
`obj_to_target`, `grasp_success` …) and, for a MuJoCo env, the contacts of the step (geom pairs
and normal forces). One file per episode, a stream of msgpack frames:

    {"seq_trace": 1, "item_id", "task", "seed", "trial", "arm", "extra", "geom_body": [...],
     "geom_fixed": [...], "instruction": str | None}
    {"t": 0, "o": obs}                                       the observation after reset
    {"t": 1, "a": f32 bytes, "s": act seed, "r": reward, "o": obs, "i": {info}, "c": contacts}
    {"end": {"status", "steps", "ended_by", "metrics"}}

Arrays are float32 bytes (`{"f4": bytes, "shape": [...]}`); contacts are `{"g": int16 bytes
(pairs of geom ids), "f": float32 bytes (normal force per pair)}`; `geom_body` names each geom's
body so a reader can tell the object from the table, `geom_fixed` whether that body is welded to
the world (the fixed scene), and `instruction` is the language the env says it was given (an env
attribute `instruction`: LIBERO's task language), for the evolve detectors. A trace cut off
by a crash (the writer's buffer unflushed) reads back up to its last whole frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import msgpack
import numpy as np

from seq.capture.trajectory import _is_image
from seq.record.artifacts import artifact_name
from seq.record.episode import EpisodeResult

if TYPE_CHECKING:
    from seq.record.work import WorkItem

FORMAT = 1
MAX_CONTACTS = 64  # per step; a step with more keeps the 64 strongest


def _array(value: np.ndarray) -> dict[str, Any]:
    data = np.ascontiguousarray(value, dtype=np.float32)
    return {"f4": data.tobytes(), "shape": list(data.shape)}


def low_dim(value: Any, key: str | None = None) -> Any:
    """An observation without its images: arrays as float32 bytes, numbers as numbers."""
    if type(value) is np.ndarray and value.ndim == 1 and value.dtype.kind == "f":  # the common case, fast
        return {"f4": value.astype(np.float32).tobytes(), "shape": [len(value)]}
    if isinstance(value, np.ndarray):
        if _is_image(value, key) or value.dtype.kind not in "fiub":
            return None
        return _array(value)
    if isinstance(value, dict):
        kept = {str(k): low_dim(v, str(k)) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None}
    if isinstance(value, (bool, int, float, np.generic)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return low_dim(np.asarray(value), key) if value else None
    return None


NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)


def _info(env: Any) -> dict[str, float]:
    """The numeric scalars of the env's last `info` (where the env keeps one as `env.info`)."""
    info = getattr(env, "info", None)
    if not isinstance(info, dict):
        return {}
    out = {}
    for key, value in info.items():
        if isinstance(value, NUMBERS):
            number = float(value)
            if math.isfinite(number):
                out[key if type(key) is str else str(key)] = number
    return out


def mujoco_of(env: Any) -> tuple[Any, Any] | None:
    """The (model, data) of a MuJoCo env behind gymnasium wrappers, or None."""
    for candidate in (getattr(env, "unwrapped", None), env):
        model, data = getattr(candidate, "model", None), getattr(candidate, "data", None)
        if model is not None and hasattr(model, "ngeom") and hasattr(data, "contact"):
            return model, data
    return None


def _instruction_of(env: Any) -> str | None:
    for candidate in (env, getattr(env, "unwrapped", None)):
        text = getattr(candidate, "instruction", None)
        if isinstance(text, str) and text:
            return text
    return None


class Contacts:
    """Reads a MuJoCo step's contacts: geom pairs and their normal forces."""

    def __init__(self, model: Any, data: Any) -> None:
        import mujoco

        self.model, self.data, self._mujoco = model, data, mujoco
        self._force = np.zeros(6)

    def geom_bodies(self) -> list[str]:
        model, mujoco = self.model, self._mujoco
        return [
            mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, int(model.geom_bodyid[g])) or ""
            for g in range(model.ngeom)
        ]

    def geom_fixed(self) -> list[bool]:
        """Whether each geom belongs to the fixed scene (its body welded to the world)."""
        model = self.model
        return [bool(model.body_weldid[int(model.geom_bodyid[g])] == 0) for g in range(model.ngeom)]

    def read(self) -> dict[str, bytes]:
        data = self.data
        count = int(data.ncon)
        if count == 0:
            return {"g": b"", "f": b""}
        contact = data.contact
        pairs = contact.geom[:count].astype(np.int16)
        # The normal force of a contact is the first row of its constraint (mj_contactForce's
        # forces[0], for the default pyramidal cones too): summed pyramid edges read as normal.
        address, dim = contact.efc_address[:count], contact.dim[:count]
        if self.model.opt.cone == self._mujoco.mjtCone.mjCONE_ELLIPTIC:
            forces = data.efc_force[address].astype(np.float32)
        else:
            forces = np.empty(count, dtype=np.float32)
            for index in range(count):
                rows = 1 if dim[index] == 1 else 2 * (int(dim[index]) - 1)
                forces[index] = data.efc_force[address[index] : address[index] + rows].sum()
        if count > MAX_CONTACTS:
            strongest = np.argsort(-np.abs(forces))[:MAX_CONTACTS]
            pairs, forces = pairs[strongest], forces[strongest]
        return {"g": pairs.tobytes(), "f": forces.tobytes()}


class TraceWriter:
    """An episode observer writing one msgpack trace per episode under `directory`."""

    def __init__(self, directory: str | Path, contacts: bool = True, **options: Any) -> None:
        self.directory = Path(directory)
        self.contacts = contacts
        self._file: BinaryIO | None = None
        self._path: Path | None = None
        self._reader: Contacts | None = None
        self._packer = msgpack.Packer(use_bin_type=True)

    def _write(self, frame: dict[str, Any]) -> None:
        assert self._file is not None
        self._file.write(self._packer.pack(frame))

    def begin(self, item: WorkItem, env: Any, obs: Any) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._path = self.directory / f"{artifact_name(item.item_id)}.trace"
        self._file = open(self._path, "wb")  # noqa: SIM115 (closed in end)
        found = mujoco_of(env) if self.contacts else None
        self._reader = Contacts(*found) if found else None
        c = item.condition
        self._write(
            {
                "seq_trace": FORMAT,
                "item_id": item.item_id,
                "task": c.task,
                "seed": c.seed,
                "trial": item.trial,
                "arm": item.arm,
                "variation": c.variation,
                "suite": c.suite,
                "extra": {str(k): v for k, v in c.extra.items()},
                "geom_body": self._reader.geom_bodies() if self._reader else None,
                "geom_fixed": self._reader.geom_fixed() if self._reader else None,
                # the language an env says it was given (LIBERO's), for instruction checks
                "instruction": _instruction_of(env),
            }
        )
        self._write({"t": 0, "o": low_dim(obs)})

    def step(self, env: Any, obs: Any, action: Any, reward: float, act_seed: int) -> None:
        if self._file is None:
            return
        frame: dict[str, Any] = {
            "a": _array(np.asarray(action)),
            "s": int(act_seed),
            "r": float(reward),
            "o": low_dim(obs),
            "i": _info(env),
        }
        if self._reader is not None:
            frame["c"] = self._reader.read()
        self._write(frame)

    def end(self, result: EpisodeResult) -> dict[str, str]:
        if self._file is None or self._path is None:
            return {}
        summary = {
            "status": result.status,
            "steps": result.steps,
            "ended_by": result.ended_by,
            "metrics": dict(result.metrics),
        }
        try:
            self._write({"end": summary})
        finally:
            self._file.close()
            self._file = None
        return {"trace": str(self._path)}


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "f4" in value and "shape" in value:
            return np.frombuffer(value["f4"], dtype=np.float32).reshape(value["shape"])
        return {k: _decode(v) for k, v in value.items()}
    return value


@dataclass
class Trace:
    """A trace read back. `observations[0]` is the reset's; step `i` (0-based) took `actions[i]`,
    got `rewards[i]`, `infos[i]`, `contacts[i]` (pairs [n, 2], forces [n]) and `observations[i+1]`."""

    header: dict[str, Any]
    observations: list[Any] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    act_seeds: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    infos: list[dict[str, float]] = field(default_factory=list)
    contacts: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    end: dict[str, Any] | None = None

    @property
    def steps(self) -> int:
        return len(self.actions)


def read_trace(path: str | Path) -> Trace:
    """Read a trace written by `TraceWriter` (a cut-off one reads up to its last whole frame)."""
    with open(path, "rb") as handle:
        unpacker = msgpack.Unpacker(handle, raw=False)
        try:
            header = next(unpacker)
        except (StopIteration, ValueError):
            raise ValueError(f"{path} is empty or not a seq trace.") from None
        if not isinstance(header, dict) or header.get("seq_trace") != FORMAT:
            raise ValueError(f"{path} is not a seq trace (format {FORMAT}).")
        trace = Trace(header)
        try:
            for frame in unpacker:
                if "end" in frame:
                    trace.end = frame["end"]
                elif frame.get("t") == 0:
                    trace.observations.append(_decode(frame["o"]))
                else:
                    trace.actions.append(_decode(frame["a"]))
                    trace.act_seeds.append(frame["s"])
                    trace.rewards.append(frame["r"])
                    trace.observations.append(_decode(frame["o"]))
                    trace.infos.append(frame.get("i") or {})
                    raw = frame.get("c") or {"g": b"", "f": b""}
                    pairs = np.frombuffer(raw["g"], dtype=np.int16).reshape(-1, 2)
                    trace.contacts.append((pairs, np.frombuffer(raw["f"], dtype=np.float32)))
        except (ValueError, msgpack.UnpackException):
            pass  # a frame cut off mid-write: what came before it stands
    return trace
