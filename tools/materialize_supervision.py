"""Proof-augmented training rows: a training-only proof appended to each multihop/compose input.

    python tools/materialize_supervision.py data/full.csv data/supervision.csv

Same final target, one row per source example; reported as privileged supervision.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import read_rows

from seq.seqbench.materialize import supervision_rows
from seq.seqbench.tasks import write_task_file


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    count = write_task_file(args.output, supervision_rows(read_rows(args.source)))
    print(f"wrote {count} supervision rows to {args.output}")


if __name__ == "__main__":
    main()
