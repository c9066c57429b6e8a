"""Write the base task rows (or their oracle variant) of every synthetic family to a CSV file.

    python tools/build_csv.py data/full.csv [--variant oracle] [--scale 1.0] [--seed 0]

Nothing is downloaded: the families are generated deterministically from (scale, seed). Rows are
streamed to the file as they are made, so an interrupted build leaves an incomplete file; delete it
and run the command again (validate-csv reports a truncated last row).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from seq.seqbench.families import base_rows, oracle_rows
from seq.seqbench.tasks import write_task_file


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--variant", choices=["base", "oracle"], default="base")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every family's row counts")
    parser.add_argument(
        "--seed", type=int, default=0, help="the generators' seed (the same seed, the same rows)"
    )
    args = parser.parse_args(argv)
    if args.scale <= 0:
        parser.error("--scale must be positive")
    rows = base_rows(args.scale, args.seed)
    if args.variant == "oracle":
        rows = oracle_rows(list(rows))
    count = write_task_file(args.output, rows)
    print(f"wrote {count} {args.variant} rows to {args.output}")


if __name__ == "__main__":
    main()
