"""An algorithm under test: its YAML (argv command, manifest, initial checkpoint) and its manifest.

```yaml
command: ["./algorithm"]          # argv; "{python}" is this Python, "{here}" the YAML's folder
manifest: manifest.json           # name, version, capabilities, external_pretraining, seed_invariant
initial_model: model              # a file or folder; never modified
```

Relative paths are relative to the YAML file. A shipped reference algorithm can be named instead of
a path: `exact-knn`, `random`, `memorizer`, `count-lm`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from seq.errors import SeqInputError

REFERENCE_DIR = Path(__file__).parent / "algorithms"
REFERENCES = {
    "exact-knn": "exact_knn",
    "random": "random_guess",
    "memorizer": "memorizer",
    "count-lm": "count_lm",
}
ALGORITHM_KEYS = {"command", "manifest", "initial_model"}
MANIFEST_KEYS = {"name", "version", "capabilities", "external_pretraining", "seed_invariant", "description"}
CAPABILITIES = ("learn", "generate", "score")


@dataclass(frozen=True)
class Manifest:
    """What the algorithm says it is and can do."""

    name: str
    version: str
    learn: bool
    generate: bool
    score: bool
    external_pretraining: bool
    seed_invariant: bool = False

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "version": self.version,
            "capabilities": {"learn": self.learn, "generate": self.generate, "score": self.score},
            "external_pretraining": self.external_pretraining,
            "seed_invariant": self.seed_invariant,
        }


@dataclass(frozen=True)
class Algorithm:
    """A black box reached only through `learn` and `infer` processes."""

    yaml_path: Path
    command: tuple[str, ...]
    manifest: Manifest
    initial_model: Path
    sha256: str

    @property
    def label(self) -> str:
        return f"{self.manifest.name}@{self.manifest.version}"


def _manifest(data: object, where: str) -> Manifest:
    if not isinstance(data, dict):
        raise SeqInputError(f"{where}: the manifest must be a JSON object.")
    unknown = set(data) - MANIFEST_KEYS
    if unknown:
        raise SeqInputError(
            f"{where}: unknown manifest key '{sorted(unknown)[0]}' (known: {sorted(MANIFEST_KEYS)})."
        )
    for key in ("name", "version", "capabilities", "external_pretraining"):
        if key not in data:
            raise SeqInputError(f"{where}: the manifest has no '{key}'.")
    capabilities = data["capabilities"]
    if not isinstance(capabilities, dict) or set(capabilities) - set(CAPABILITIES):
        raise SeqInputError(f"{where}: 'capabilities' must map learn/generate/score to true or false.")
    flags = {name: capabilities.get(name, False) for name in CAPABILITIES}
    for name, value in [*flags.items(), ("external_pretraining", data["external_pretraining"])]:
        if not isinstance(value, bool):
            raise SeqInputError(f"{where}: '{name}' must be true or false, not {value!r}.")
    if not (flags["generate"] or flags["score"]):
        raise SeqInputError(f"{where}: the algorithm must be able to generate or score (or both).")
    invariant = data.get("seed_invariant", False)
    if not isinstance(invariant, bool):
        raise SeqInputError(f"{where}: 'seed_invariant' must be true or false.")
    return Manifest(
        name=str(data["name"]),
        version=str(data["version"]),
        learn=flags["learn"],
        generate=flags["generate"],
        score=flags["score"],
        external_pretraining=data["external_pretraining"],
        seed_invariant=invariant,
    )


def resolve_algorithm_path(name_or_path: str) -> Path:
    """A path as given, or the YAML of a shipped reference algorithm named like `exact-knn`."""
    if name_or_path in REFERENCES:
        return REFERENCE_DIR / f"{REFERENCES[name_or_path]}.yaml"
    return Path(name_or_path)


def load_algorithm(name_or_path: str) -> Algorithm:
    """Read and check an algorithm YAML and its manifest; any problem is one sentence (exit 2)."""
    path = resolve_algorithm_path(name_or_path)
    if not path.is_file():
        known = ", ".join(REFERENCES)
        raise SeqInputError(f"--algorithm {name_or_path}: no such file (or a reference name: {known}).")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise SeqInputError(f"{path}: not valid YAML ({str(error).splitlines()[0]}).") from None
    if not isinstance(data, dict):
        raise SeqInputError(f"{path}: expected a mapping with command, manifest and initial_model.")
    unknown = set(data) - ALGORITHM_KEYS
    if unknown:
        raise SeqInputError(
            f"{path}: unknown key '{sorted(unknown)[0]}' (known: command, manifest, initial_model)."
        )
    for key in sorted(ALGORITHM_KEYS):
        if key not in data:
            raise SeqInputError(f"{path}: missing key '{key}'.")
    here = path.resolve().parent
    command = data["command"]
    if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
        raise SeqInputError(f"{path}: 'command' must be a non-empty list of strings (an argv).")
    argv = [c.replace("{python}", sys.executable).replace("{here}", str(here)) for c in command]
    if argv[0].startswith("."):
        argv[0] = str((here / argv[0]).resolve())
    manifest_path = here / str(data["manifest"])
    if not manifest_path.is_file():
        raise SeqInputError(f"{path}: manifest file {manifest_path} does not exist.")
    try:
        manifest_data = json.loads(manifest_path.read_text())
    except json.JSONDecodeError as error:
        raise SeqInputError(f"{manifest_path}: not valid JSON ({error.msg}, line {error.lineno}).") from None
    manifest = _manifest(manifest_data, str(manifest_path))
    initial = here / str(data["initial_model"])
    if not initial.exists():
        raise SeqInputError(f"{path}: initial_model {initial} does not exist.")
    digest = hashlib.sha256(path.read_bytes() + manifest_path.read_bytes()).hexdigest()
    return Algorithm(path.resolve(), tuple(argv), manifest, initial, digest)
