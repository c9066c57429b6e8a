"""A label-noise copy of the markov training rows (a fraction of targets replaced by a wrong token).

python tools/materialize_noise.py data/full.csv data/noise.csv --seed 42 [--rate 0.25]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import read_rows

from seq.seqbench.materialize import noise_rows
from seq.seqbench.tasks import write_task_file


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--rate", type=float, default=0.25, help="the fraction of targets replaced")
    args = parser.parse_args(argv)
    if not 0.0 <= args.rate <= 1.0:
        parser.error("--rate must be between 0 and 1")
    count = write_task_file(args.output, noise_rows(read_rows(args.source), args.seed, args.rate))
    print(f"wrote {count} noise rows to {args.output}")


if __name__ == "__main__":
    main()
