"""`python -m seq.port.worker COMMAND ARGS_JSON RESULT_PATH`: what runs in another environment.

Commands: `export` (in a benchmark's image), `check-model` (`seq.port.check_model`) and
`replay` (`seq.port.replay`), in the port environment; `sapien-replay`
(`seq.port.sapien_worlds`), in a SAPIEN benchmark's image. The result is written as JSON to
RESULT_PATH; bad input exits 2 with `{"refused": sentence}` there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from seq.errors import SeqInputError


def main(argv: list[str]) -> int:
    command, arguments, result_path = argv[0], json.loads(argv[1]), Path(argv[2])
    try:
        if command == "export":
            from seq.port.mujoco_export import export_here

            arguments["out"] = Path(arguments["out"])
            result = export_here(**arguments, log=lambda line: print(line, file=sys.stderr))
        elif command == "check-model":
            from seq.port.mujoco_check import check_model_here

            result = check_model_here(**arguments)
        elif command == "replay":
            from seq.port.replay import replay_here

            result = replay_here(**arguments)
        elif command == "sapien-replay":
            from seq.port.sapien_worlds import replay_sapien_here

            result = replay_sapien_here(**arguments)
        else:
            raise SeqInputError(f"seq.port.worker: unknown command {command!r}.")
    except SeqInputError as error:
        result_path.write_text(json.dumps({"refused": str(error)}))
        return 2
    result_path.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
