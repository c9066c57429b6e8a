"""The commands the examples, bench scripts and docs show use the flags' current spellings: `--tasks`,
`-o`, and `--seeds` as seeds (`0-9`), never a count."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOWN = [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("examples/**/*")]
SHOWN += ROOT.glob("bench/**/*")
# a `seq` command, or bench/lift_warp.py, which takes `--seeds` and `-o` as `seq` does
OLD = re.compile(
    r"(\bseq [a-z]|bench/lift_warp\.py).*?(--task |--out |--output-dir|--seeds [1-9][0-9]+(?![-,0-9]))"
)


def test_shown_commands_use_current_flag_spellings() -> None:
    old = [
        f"{path.relative_to(ROOT)}:{number}: {match.group(2).strip()}"
        for path in SHOWN
        if path.is_file() and path.suffix in {".md", ".py", ".yml", ".yaml", ".sh"}
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if (match := OLD.search(line))
    ]
    assert not old, "old flag spellings:\n" + "\n".join(old)
