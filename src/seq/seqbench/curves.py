"""curves/: the learning curve (accuracy and checkpoint size by examples) and accuracy by input length."""

from __future__ import annotations

import csv
import html
from pathlib import Path

from seq.seqbench.scoring import item_value

LENGTH_BUCKETS = (4, 8, 12, 16, 24, 32, 48, 64)


def _bucket(tokens: int) -> str:
    low = 0
    for high in LENGTH_BUCKETS:
        if tokens <= high:
            return f"{low + 1}-{high}"
        low = high
    return f">{LENGTH_BUCKETS[-1]}"


def _svg_curve(points: list[tuple[float, float, float | None, float | None]], title: str) -> str:
    """A small line chart of accuracy (with its interval as whiskers) against examples."""
    width, height, pad = 480, 300, 48
    xs = [p[0] for p in points] or [0.0]
    x_max = max(xs) or 1.0

    def x(v: float) -> float:
        return pad + (width - 2 * pad) * v / x_max

    def y(v: float) -> float:
        return height - pad - (height - 2 * pad) * v

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{html.escape(title)}</text>',
        f'<line x1="{pad}" y1="{y(0)}" x2="{width - pad}" y2="{y(0)}" stroke="#444"/>',
        f'<line x1="{pad}" y1="{y(0)}" x2="{pad}" y2="{y(1)}" stroke="#444"/>',
        f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle">training examples</text>',
        f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" '
        'text-anchor="middle">accuracy</text>',
    ]
    for tick in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{pad - 6}" y="{y(tick) + 4}" text-anchor="end">{tick:.1f}</text>')
    path = " ".join(f"{x(px):.1f},{y(py):.1f}" for px, py, _, _ in points)
    if points:
        parts.append(f'<polyline points="{path}" fill="none" stroke="#1f5fbf" stroke-width="2"/>')
    for px, py, low, high in points:
        parts.append(f'<circle cx="{x(px):.1f}" cy="{y(py):.1f}" r="3" fill="#1f5fbf"/>')
        if low is not None and high is not None:
            parts.append(
                f'<line x1="{x(px):.1f}" y1="{y(low):.1f}" x2="{x(px):.1f}" y2="{y(high):.1f}" '
                'stroke="#1f5fbf"/>'
            )
        parts.append(f'<text x="{x(px):.1f}" y="{y(0) + 14}" text-anchor="middle">{int(px)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_curves(folder: Path, scaling: dict, records: list[dict], generates: bool) -> None:
    """Write learning_curve.csv/.svg from scaling.json and accuracy_by_length.csv from the records."""
    folder.mkdir(parents=True, exist_ok=True)
    points = []
    with (folder / "learning_curve.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["stage", "examples", "checkpoint_bytes", "items", "accuracy", "low", "high"])
        for point in scaling["points"]:
            acc = point["accuracy"] or {}
            writer.writerow(
                [
                    point["stage"],
                    point["examples"],
                    point["checkpoint_bytes"],
                    point["items"],
                    acc.get("mean"),
                    acc.get("low"),
                    acc.get("high"),
                ]
            )
            if acc.get("mean") is not None:
                points.append((float(point["examples"]), acc["mean"], acc.get("low"), acc.get("high")))
    (folder / "learning_curve.svg").write_text(_svg_curve(sorted(points), "learning curve"))
    buckets: dict[tuple[str, str, str], list[float]] = {}
    for record in records:
        if record["broadcast"]:
            continue
        value = item_value(record, "accuracy", generates)
        if value is None:
            continue
        key = (record["stage"], record["family"], _bucket(len(record["input"].split())))
        buckets.setdefault(key, []).append(value)
    with (folder / "accuracy_by_length.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["stage", "family", "input_tokens", "items_x_seeds", "accuracy"])
        for (stage, family, bucket), values in sorted(buckets.items()):
            writer.writerow([stage, family, bucket, len(values), round(sum(values) / len(values), 6)])
