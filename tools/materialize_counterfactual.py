"""From nonce rows: counterfactual rows whose context is edited so that the answer changes.

python tools/materialize_counterfactual.py data/nonce.csv data/nonce-counterfactual.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import read_rows

from seq.seqbench.materialize import counterfactual_rows
from seq.seqbench.tasks import write_task_file


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    count = write_task_file(args.output, counterfactual_rows(read_rows(args.source)))
    print(f"wrote {count} counterfactual rows to {args.output}")


if __name__ == "__main__":
    main()
