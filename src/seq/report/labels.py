"""Short, distinct labels for long group names on a plot's axis.

A plotting library cuts a long label at a fixed width, so tasks that differ only past it read
alike (LIBERO's "pick_up_the_black_bowl_next_to_the…" three times). `distinct_labels` keeps a
name that fits as it is and abbreviates a longer one around what tells it from the others: the
words it shares with another name at its start or end become "…", and the words that differ are
kept with as much context as fits. Every label is distinct; the plots give the whole name on hover
and in a legend under the plot.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

LABEL_CHARS = 34  # the longest label a plot's axis shows whole
ELLIPSIS = "…"
_WORDS = re.compile(r"[^_\-\s./]+[_\-\s./]*")  # a word with the separators after it


def _words(name: str) -> list[str]:
    return _WORDS.findall(name) or [name]


def _shared_prefix(a: list[str], b: list[str]) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left.rstrip("_- ./") != right.rstrip("_- ./"):
            break
        count += 1
    return count


def _abbreviate(words: list[str], start: int, stop: int, limit: int) -> str:
    """The words `start:stop` (what differs), widened left as far as the label fits, then right, with
    "…" where words are left out; a middle longer than `limit` is cut at its end."""
    start, stop = min(start, len(words) - 1), max(stop, min(start, len(words) - 1) + 1)

    def text(first: int, last: int) -> str:
        middle = "".join(words[first:last]).rstrip("_- ./")
        return (ELLIPSIS if first > 0 else "") + middle + (ELLIPSIS if last < len(words) else "")

    while start > 0 and len(text(start - 1, stop)) <= limit:
        start -= 1
    while stop < len(words) and len(text(start, stop + 1)) <= limit:
        stop += 1
    label = text(start, stop)
    if len(label) > limit:
        label = label[: limit - 1].rstrip("_- ./") + ELLIPSIS
    return label


def distinct_labels(names: Iterable[str], limit: int = LABEL_CHARS) -> dict[str, str]:
    """Each name's label: itself where it fits in `limit` characters, else an abbreviation that
    keeps what tells it from the others; no two names share a label."""
    unique = list(dict.fromkeys(names))
    split = {name: _words(name) for name in unique}
    labels: dict[str, str] = {}
    for name in unique:
        if len(name) <= limit:
            labels[name] = name
            continue
        words = split[name]
        others = [split[other] for other in unique if other != name]
        prefix = max((_shared_prefix(words, other) for other in others), default=0)
        suffix = max((_shared_prefix(words[::-1], other[::-1]) for other in others), default=0)
        stop = max(len(words) - suffix, prefix + 1)
        labels[name] = _abbreviate(words, prefix, stop, limit)
    taken = Counter(labels.values())
    counters: dict[str, int] = {}
    for name in unique:  # where abbreviations still meet (each other or a name), number them
        label = labels[name]
        if label != name and taken[label] > 1:
            counters[label] = counters.get(label, 0) + 1
            labels[name] = f"{label} ({counters[label]})"
    return labels
