"""Stress copies of the in-context test probes with their entities renamed to fresh nonce tokens.

python tools/materialize_nonce.py data/full.csv data/nonce.csv --seed 42
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import read_rows

from seq.seqbench.materialize import nonce_rows
from seq.seqbench.tasks import write_task_file


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args(argv)
    count = write_task_file(args.output, nonce_rows(read_rows(args.source), args.seed))
    print(f"wrote {count} nonce rows to {args.output}")


if __name__ == "__main__":
    main()
