"""`seqbench screen`: a permissive discovery gate of candidate runs against a saved baseline run.

Per metric (a property of the run spec), the paired 95% interval of candidate − baseline over the same
items: Agresti–Min when both sides are one 0/1 observation per item, otherwise the BCa bootstrap of
the mean paired difference (item values averaged over each side's independent seeds).

- PROMOTE: some metric's interval still permits an improvement (its upper end is above 0). This is a
  discovery gate, not evidence that an improvement is established.
- DROP: only with three or more candidate seeds (a seed-invariant candidate's seed axis counts, its
  one evaluation is still one observation per item), and every interval excluding an improvement.
- INCONCLUSIVE: otherwise.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from seq.errors import SeqInputError
from seq.report.tables import Table
from seq.seqbench.metrics import item_values
from seq.seqbench.run_files import RunFiles, load_run
from seq.seqbench.run_report import Section, fmt, render_html, render_markdown
from seq.seqbench.specs import parse_where
from seq.stats import agresti_min_interval, paired_bootstrap_interval, paired_table

PROMOTE, DROP, INCONCLUSIVE = "PROMOTE", "DROP", "INCONCLUSIVE"
SCREEN_KEYS = {"screen", "version", "description", "run_spec", "level", "min_drop_seeds", "metrics"}


@dataclass(frozen=True)
class ScreenSpec:
    name: str
    version: int
    run_spec: tuple[str, int]
    level: float
    min_drop_seeds: int
    metrics: tuple[str, ...]
    path: Path


def load_screen_spec(path: Path) -> ScreenSpec:
    """Read and check a screen spec; a bad key is one sentence naming it."""
    path = Path(path)
    if not path.is_file():
        raise SeqInputError(f"{path}: the screen spec does not exist.")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise SeqInputError(f"{path}: not valid YAML ({str(error).splitlines()[0]}).") from None
    if not isinstance(data, dict):
        raise SeqInputError(f"{path}: expected a mapping.")
    unknown = set(data) - SCREEN_KEYS
    if unknown:
        raise SeqInputError(
            f"{path}: unknown key '{sorted(unknown)[0]}' (known: {', '.join(sorted(SCREEN_KEYS))})."
        )
    for key in ("screen", "version", "run_spec", "metrics"):
        if key not in data:
            raise SeqInputError(f"{path}: missing key '{key}'.")
    run_spec = data["run_spec"]
    if not isinstance(run_spec, dict) or set(run_spec) != {"name", "version"}:
        raise SeqInputError(f"{path}: 'run_spec' must be a mapping of name and version.")
    metrics = data["metrics"]
    if not isinstance(metrics, list) or not metrics or not all(isinstance(m, str) for m in metrics):
        raise SeqInputError(f"{path}: 'metrics' must be a non-empty list of property names.")
    level = data.get("level", 0.95)
    if not isinstance(level, float) or not 0.5 < level < 1:
        raise SeqInputError(f"{path}: 'level' must be a number between 0.5 and 1, such as 0.95.")
    drop_seeds = data.get("min_drop_seeds", 3)
    if not isinstance(drop_seeds, int) or drop_seeds < 1:
        raise SeqInputError(f"{path}: 'min_drop_seeds' must be a positive integer.")
    return ScreenSpec(
        str(data["screen"]),
        int(data["version"]),
        (str(run_spec["name"]), int(run_spec["version"])),
        level,
        drop_seeds,
        tuple(metrics),
        path,
    )


def _check_runs(spec: ScreenSpec, candidates: list[RunFiles], baseline: RunFiles) -> None:
    for run in [*candidates, baseline]:
        made_with = (run.spec["name"], run.spec["version"])
        if made_with != spec.run_spec:
            raise SeqInputError(
                f"{run.path}: made with spec {made_with[0]}@{made_with[1]}, but {spec.path.name} "
                "screens runs of "
                f"{spec.run_spec[0]}@{spec.run_spec[1]}."
            )
        if run.spec["sha256"] != baseline.spec["sha256"]:
            raise SeqInputError(
                f"{run.path}: its spec file differs from the baseline's (sha256); rerun one of them."
            )
        tasks = sorted(t["sha256"] for t in run.manifest["tasks"])
        if tasks != sorted(t["sha256"] for t in baseline.manifest["tasks"]):
            raise SeqInputError(f"{run.path}: made on other task files than the baseline {baseline.path}.")
    labels = {c.algorithm_label for c in candidates}
    if len(labels) > 1:
        raise SeqInputError(f"the candidate runs are of different algorithms ({', '.join(sorted(labels))}).")
    seen: dict[int, Path] = {}
    for run in candidates:
        for seed in run.manifest["independent_seeds"]:
            if seed in seen:
                raise SeqInputError(f"seed {seed} is in both candidate runs {seen[seed]} and {run.path}.")
            seen[seed] = run.path


def _accuracy_kind(candidates: list[RunFiles], baseline: RunFiles) -> bool:
    """True when both sides generate (accuracy is exact match), False when both only score."""
    sides = [c.manifest["algorithm"]["capabilities"] for c in [*candidates, baseline]]
    if all(s["generate"] for s in sides):
        return True
    if all(s["score"] for s in sides):
        return False
    raise SeqInputError(
        "the candidate and the baseline share neither generation nor scoring; they cannot be compared."
    )


def _seed_count(candidates: list[RunFiles]) -> tuple[int, int]:
    """(seeds on the candidate's seed axis, independent observations per item)."""
    if all(c.seed_invariant for c in candidates):
        return len({s for c in candidates for s in c.manifest["seeds"]}), 1
    seeds = {s for c in candidates for s in c.manifest["independent_seeds"]}
    return len(seeds), len(seeds)


def compare_metric(baseline: dict[str, float], candidate: dict[str, float], single: bool, level: float):
    """The paired interval of candidate − baseline over the items both have."""
    if set(baseline) != set(candidate):
        raise SeqInputError(
            "the candidate and baseline runs scored different items; were they made on the same tasks?"
        )
    items = sorted(baseline)
    a, b = [baseline[i] for i in items], [candidate[i] for i in items]
    if single and all(v in (0.0, 1.0) for v in a + b):
        return agresti_min_interval(paired_table(a, b), level)
    return paired_bootstrap_interval(a, b, level)


def screen(spec_path: Path, candidate_paths: list[Path], baseline_path: Path, output: Path) -> dict:
    """Screen the candidate runs against the baseline; writes screen.json, screen.md and screen.html."""
    spec = load_screen_spec(spec_path)
    if not candidate_paths:
        raise SeqInputError("seqbench screen needs at least one --candidate run.")
    candidates = [load_run(p) for p in candidate_paths]
    baseline = load_run(baseline_path)
    _check_runs(spec, candidates, baseline)
    generates = _accuracy_kind(candidates, baseline)
    definitions = baseline.resolved["run_spec"]["properties"]
    candidate_records = [r for c in candidates for r in c.records()]
    baseline_records = baseline.records()
    seed_axis, observations = _seed_count(candidates)
    rows = []
    for metric in spec.metrics:
        if metric not in definitions:
            raise SeqInputError(f"{spec.path}: metric '{metric}' is not a property of {spec.run_spec[0]}.")
        d = definitions[metric]
        where = parse_where(d["where"], f"{spec.path}: {metric}")
        args = (d["stage"], where, d["metric"], generates, d.get("reference_bytes"))
        base_values = item_values(baseline_records, *args)
        cand_values = item_values(candidate_records, *args)
        single = observations == 1 and len(baseline.manifest["independent_seeds"]) == 1
        interval = compare_metric(base_values, cand_values, single, spec.level)
        permits = math.isnan(interval.high) or interval.high > 0
        rows.append(
            {
                "metric": metric,
                "items": interval.n,
                "candidate": sum(cand_values.values()) / len(cand_values) if cand_values else None,
                "baseline": sum(base_values.values()) / len(base_values) if base_values else None,
                "difference": interval.difference,
                "low": None if math.isnan(interval.low) else interval.low,
                "high": None if math.isnan(interval.high) else interval.high,
                "method": interval.method,
                "permits_improvement": permits,
            }
        )
    if any(r["permits_improvement"] for r in rows):
        verdict, why = PROMOTE, "at least one interval still permits an improvement over the baseline"
    elif seed_axis >= spec.min_drop_seeds:
        verdict, why = DROP, f"every interval excludes an improvement, with {seed_axis} candidate seeds"
    else:
        verdict, why = (
            INCONCLUSIVE,
            (
                f"every interval excludes an improvement, but DROP needs {spec.min_drop_seeds} "
                "candidate seeds "
                f"and there are {seed_axis}"
            ),
        )
    result = {
        "screen": {"name": spec.name, "version": spec.version, "path": str(spec.path), "level": spec.level},
        "run_spec": {
            "name": spec.run_spec[0],
            "version": spec.run_spec[1],
            "sha256": baseline.spec["sha256"],
        },
        "candidate": {
            "algorithm": candidates[0].algorithm_label,
            "runs": [str(c.path) for c in candidates],
            "seeds": seed_axis,
            "independent_observations_per_item": observations,
            "seed_invariant": all(c.seed_invariant for c in candidates),
        },
        "baseline": {"algorithm": baseline.algorithm_label, "run": str(baseline.path)},
        "verdict": verdict,
        "reason": why,
        "metrics": rows,
    }
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    (output / "screen.json").write_text(json.dumps(result, indent=2) + "\n")
    title, sections = screen_sections(result)
    (output / "screen.md").write_text(render_markdown(title, sections))
    (output / "screen.html").write_text(render_html(title, sections))
    return result


def screen_sections(result: dict) -> tuple[str, list[Section]]:
    candidate, baseline = result["candidate"], result["baseline"]
    title = f"seqbench screen {result['screen']['name']}: {candidate['algorithm']} vs {baseline['algorithm']}"
    section = Section("Verdict")
    section.paragraphs.append(f"**{result['verdict']}**: {result['reason']}.")
    section.paragraphs.append(
        f"Candidate runs: {', '.join(candidate['runs'])} ({candidate['seeds']} seed(s)"
        + ("; seed-invariant, one observation per item" if candidate["seed_invariant"] else "")
        + f"). Baseline: {baseline['run']}. Differences are candidate − baseline over the same items, with "
        f"paired {int(100 * result['screen']['level'])}% intervals. PROMOTE is a permissive discovery "
        "gate: an "
        "interval that still permits an improvement, not an established one."
    )
    rows = [
        [
            r["metric"],
            str(r["items"]),
            fmt(r["candidate"]),
            fmt(r["baseline"]),
            fmt(r["difference"]),
            f"[{fmt(r['low'])}, {fmt(r['high'])}]",
            r["method"],
            "yes" if r["permits_improvement"] else "no",
        ]
        for r in result["metrics"]
    ]
    section.tables.append(
        Table(
            [
                "metric",
                "items",
                "candidate",
                "baseline",
                "difference",
                "95% interval",
                "method",
                "permits improvement",
            ],
            rows,
            ["left", "right", "right", "right", "right", "right", "left", "left"],
        )
    )
    return title, [section]
