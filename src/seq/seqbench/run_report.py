"""report.md and report.html of a run: one list of sections, rendered twice with the shared tables."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

from seq.report.tables import Table, html_page, to_html, to_markdown
from seq.stats import SMALL_N

STATUS_CLASSES = {s: s for s in ("PASS", "FAIL", "UNCALIBRATED", "PROMOTE", "DROP", "INCONCLUSIVE")}


@dataclass
class Section:
    """A heading, some paragraphs, tables, and optional preformatted blocks."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)


def fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def fmt_interval(entry: dict | None, digits: int = 3) -> str:
    """`0.812 [0.741, 0.866]`, or the bare mean without an interval."""
    if not entry or entry.get("mean") is None:
        return "—"
    if entry.get("low") is None or entry.get("high") is None:
        return fmt(entry["mean"], digits)
    return f"{fmt(entry['mean'], digits)} [{fmt(entry['low'], digits)}, {fmt(entry['high'], digits)}]"


def render_markdown(title: str, sections: list[Section]) -> str:
    parts = [f"# {title}", ""]
    for section in sections:
        parts += [f"## {section.title}", ""]
        for paragraph in section.paragraphs:
            parts += [paragraph, ""]
        for table in section.tables:
            parts += [to_markdown(table)]
        for block in section.blocks:
            parts += ["```", block.rstrip(), "```", ""]
    return "\n".join(parts).rstrip() + "\n"


def render_html(title: str, sections: list[Section]) -> str:
    body = [f"<h1>{html.escape(title)}</h1>"]
    for section in sections:
        body.append(f"<h2>{html.escape(section.title)}</h2>")
        body += [f"<p>{html.escape(p).replace('**', '')}</p>" for p in section.paragraphs]
        body += [to_html(table, STATUS_CLASSES) for table in section.tables]
        body += [f"<pre>{html.escape(block)}</pre>" for block in section.blocks]
    return html_page(title, "\n".join(body) + "\n")


def run_sections(payload: dict) -> tuple[str, list[Section]]:
    """The report of one run, from its JSON payload (so `seqbench report` can rebuild it from files)."""
    manifest, metrics = payload["manifest.json"], payload["metrics.json"]
    properties = payload["properties.json"]
    algorithm, spec = manifest["algorithm"], manifest["spec"]
    title = f"seqbench: {algorithm['name']}@{algorithm['version']} on {spec['name']}@{spec['version']}"
    head = Section("Summary")
    head.paragraphs.append(
        f"Status **{manifest['status']}**; seeds {manifest['seeds']} ({manifest['seed_axis']}); "
        f"accuracy means {metrics['accuracy_means'].replace('_', ' ')}."
    )
    if not properties["calibrated"]:
        head.paragraphs.append(
            "**UNCALIBRATED**: no thresholds exist for this spec yet, so properties are reported without "
            "PASS/FAIL (seqbench calibrate sets them from weak and strong reference runs)."
        )
    rows = [
        [
            p["name"] + (" (privileged supervision)" if p["privileged_supervision"] else ""),
            fmt_interval(p["interval"]),
            str(p["items"]) + (" ⚠" if p["items"] < SMALL_N else ""),
            ", ".join(map(str, p["seeds"])),
            p["metric"],
            p["stage"],
            p["status"],
            p["evidence"],
        ]
        for p in properties["properties"]
    ]
    head.tables.append(
        Table(
            ["property", "value [95% CI]", "items", "seeds", "metric", "stage", "status", "evidence"],
            rows,
            ["left", "right", "right", "left", "left", "left", "left", "left"],
            "Properties",
        )
    )
    head.paragraphs.append(
        "Intervals are over items (each item averaged over the independent seeds): Wilson for 0/1 values, "
        f"BCa bootstrap otherwise. ⚠ marks fewer than {SMALL_N} items."
    )
    sections = [head, _metric_section(metrics), _scaling_section(payload["scaling.json"])]
    sections += [
        _resource_section(payload["resources.json"]),
        _diagnostic_section(payload["diagnostics.json"]),
    ]
    sections.append(_manifest_section(manifest))
    return title, sections


def _metric_section(metrics: dict) -> Section:
    section = Section("Metrics by stage")
    for stage, groups in metrics["stages"].items():
        rows = [
            [
                g["family"],
                g["condition"],
                g["variant"],
                str(g["items"]),
                fmt_interval(g.get("exact_match")),
                fmt_interval(g.get("choice_accuracy")),
                fmt_interval(g.get("target_log_probability"), 2),
                fmt(g.get("zero_probability_rate")),
                str(g["unanswered"]),
            ]
            for g in groups
        ]
        section.tables.append(
            Table(
                [
                    "family",
                    "condition",
                    "variant",
                    "items",
                    "exact match",
                    "choice accuracy",
                    "target log p",
                    "p = 0 rate",
                    "unanswered",
                ],
                rows,
                ["left", "left", "left", "right", "right", "right", "right", "right", "right"],
                f"stage {stage}",
            )
        )
    per_seed = metrics.get("per_seed_accuracy", {})
    if per_seed:
        seeds = sorted({s for values in per_seed.values() for s in values}, key=int)
        section.tables.append(
            Table(
                ["stage", *[f"seed {s}" for s in seeds]],
                [[stage, *[fmt(values.get(s)) for s in seeds]] for stage, values in per_seed.items()],
                ["left", *["right"] * len(seeds)],
                "Accuracy per seed (broadcast seeds repeat the one evaluation)",
            )
        )
    return section


def _scaling_section(scaling: dict) -> Section:
    section = Section("Scaling and checkpoint efficiency")
    rows = [
        [
            p["stage"],
            str(p["examples"]),
            str(p["checkpoint_bytes"] or "—"),
            fmt(p["bytes_per_example"], 1),
            fmt_interval(p["accuracy"]),
        ]
        for p in scaling["points"]
    ]
    if rows:
        section.tables.append(
            Table(
                ["stage", "examples", "checkpoint bytes", "bytes / example", "accuracy [95% CI]"],
                rows,
                ["left", "right", "right", "right", "right"],
            )
        )
        section.paragraphs.append(
            "curves/learning_curve.svg plots these points; curves/accuracy_by_length.csv "
            "gives accuracy by input length."
        )
    else:
        section.paragraphs.append("The spec defines no scaling stages.")
    return section


def _resource_section(resources: dict) -> Section:
    totals = resources["totals"]
    section = Section("Resources")
    overhead = totals["runner_overhead_fraction"]
    section.paragraphs.append(
        f"{totals['calls']} calls; algorithm processes {totals['process_s']:.2f} s; runner overhead "
        f"{totals['runner_overhead_s']:.3f} s ({'—' if overhead is None else f'{100 * overhead:.1f}%'}); "
        f"peak resident memory {totals['peak_rss_mb']:.0f} MB; largest checkpoint "
        f"{totals['largest_checkpoint_bytes'] or '—'} bytes."
    )
    rows = [
        [
            c["operation"],
            str(c["seed"]),
            c["stage"],
            c["status"],
            f"{c['process_s']:.2f}",
            f"{c['max_rss_mb']:.0f}",
            str(c["examples"] or c["requests"]),
            str(c["checkpoint_bytes"] or "—"),
            c["reason"],
        ]
        for c in resources["calls"]
    ]
    section.tables.append(
        Table(
            [
                "call",
                "seed",
                "stage",
                "status",
                "seconds",
                "peak MB",
                "examples / requests",
                "checkpoint bytes",
                "reason",
            ],
            rows,
            ["left", "right", "left", "left", "right", "right", "right", "right", "left"],
        )
    )
    return section


def _diagnostic_section(diagnostics: dict) -> Section:
    section = Section("Diagnostics")
    section.paragraphs.append(
        f"{len(diagnostics['failed_calls'])} failed or over-budget call(s); "
        f"{diagnostics['unanswered_items']} "
        f"unanswered item(s) (scored 0); {diagnostics['targets_with_probability_zero']} target(s) given "
        "probability zero."
    )
    section.paragraphs += diagnostics["notes"]
    for call in diagnostics["failed_calls"]:
        text = f"{call['operation']} seed {call['seed']} stage {call['stage']}: "
        text += f"{call['status']}: {call['reason']}"
        section.blocks.append(text + ("\n" + call["stderr_tail"] if call["stderr_tail"] else ""))
    if diagnostics["small_groups"]:
        section.paragraphs.append("Small groups: " + "; ".join(diagnostics["small_groups"][:20]))
    return section


def _manifest_section(manifest: dict) -> Section:
    section = Section("Reproducibility manifest")
    algorithm, spec = manifest["algorithm"], manifest["spec"]
    lines = [
        f"seq {manifest['seqbench']['seq_version']} (git {manifest['seqbench']['git_sha'] or 'n/a'})",
        f"spec {spec['name']}@{spec['version']} sha256 {spec['sha256']}",
        f"algorithm {algorithm['name']}@{algorithm['version']} sha256 {algorithm['sha256']}; "
        f"command {' '.join(algorithm['command'])}",
        f"capabilities {algorithm['capabilities']}; external pretraining {algorithm['external_pretraining']}",
        *[f"tasks {t['path']} ({t['rows']} rows) sha256 {t['sha256']}" for t in manifest["tasks"]],
        f"sampling seed {manifest['sampling_seed']}; calibration {manifest['calibration'] or 'none'}",
        f"python {manifest['environment']['python']} on {manifest['environment']['platform']}",
        f"started {manifest['started']}, ended {manifest['ended']} ({manifest['wall_s']} s)",
    ]
    section.blocks.append("\n".join(lines))
    return section


def write_reports(output: Path, payload: dict) -> None:
    """report.md and report.html of a run directory."""
    title, sections = run_sections(payload)
    (output / "report.md").write_text(render_markdown(title, sections))
    (output / "report.html").write_text(render_html(title, sections))
