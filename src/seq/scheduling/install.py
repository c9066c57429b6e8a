"""`seq scheduler install`: have the system run `seq scheduler run --once` every minute, so that
schedules survive reboots with no daemon to keep alive by hand.

- systemd (default): a user timer and the oneshot service it starts, written to
  `$XDG_CONFIG_HOME/systemd/user` (`~/.config/systemd/user`), then enabled with `systemctl
  --user enable --now seq-scheduler.timer` where systemctl is here. `Persistent=true` runs a
  tick missed while the machine was off at boot; the scheduler runs missed fires once.
- cron: one crontab line (tagged `# seq-scheduler`, replacing an earlier one for this SEQ_HOME),
  installed with the `crontab` command.

Both run the `seq` that installed them, with this SEQ_HOME (and PYTHONPATH, where set).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError
from seq.record.paths import seq_home

UNIT = "seq-scheduler"
TAG = "# seq-scheduler"


def scheduler_command() -> list[str]:
    """The command line that runs due schedules once, with the `seq` of this installation."""
    script = Path(sys.executable).parent / "seq"
    found = str(script) if script.exists() else shutil.which("seq")
    if found is None:
        return [sys.executable, "-c", "from seq.cli import main; main()", "scheduler", "run", "--once"]
    return [found, "scheduler", "run", "--once"]


def _environment() -> dict[str, str]:
    env = {"SEQ_HOME": str(seq_home().resolve())}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def systemd_units() -> dict[str, str]:
    """The timer and service, by file name."""
    env = _environment()
    service = "\n".join(
        [
            "[Unit]",
            f"Description=seq scheduler: run the scheduled evals that are due ({env['SEQ_HOME']})",
            "",
            "[Service]",
            "Type=oneshot",
            *(f'Environment="{key}={value}"' for key, value in env.items()),
            f"ExecStart={shlex.join(scheduler_command())}",
            "",
        ]
    )
    timer = "\n".join(
        [
            "[Unit]",
            "Description=seq scheduler: look for due scheduled evals every minute",
            "",
            "[Timer]",
            "OnCalendar=*-*-* *:*:00",
            "Persistent=true",
            "",
            "[Install]",
            "WantedBy=timers.target",
            "",
        ]
    )
    return {f"{UNIT}.service": service, f"{UNIT}.timer": timer}


def crontab_line() -> str:
    """Every minute, due schedules run; output appended to `scheduler.log` in SEQ_HOME."""
    env = _environment()
    assignments = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
    log = shlex.quote(str(Path(env["SEQ_HOME"]) / "scheduler.log"))
    return f"* * * * * {assignments} {shlex.join(scheduler_command())} >> {log} 2>&1 {TAG} {env['SEQ_HOME']}"


def _user_unit_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def install_scheduler(kind: str = "systemd", write: bool = True, enable: bool = True) -> dict[str, Any]:
    """Install the scheduler for this SEQ_HOME as a systemd user timer (`kind="systemd"`) or a
    crontab line (`"cron"`). `write=False` only returns what it would write. Returns `kind`,
    `files` (path → text, systemd) or `line` (cron), and `commands` run or left to run."""
    if kind == "systemd":
        folder = _user_unit_dir()
        files = {str(folder / name): text for name, text in systemd_units().items()}
        commands = [
            ["systemctl", "--user", "daemon-reload"],
            ["systemctl", "--user", "enable", "--now", f"{UNIT}.timer"],
        ]
        result: dict[str, Any] = {
            "kind": kind,
            "files": files,
            "commands": [shlex.join(c) for c in commands],
            "ran": False,
        }
        if not write:
            return result
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            Path(path).write_text(text)
        if enable and shutil.which("systemctl"):
            for command in commands:
                done = subprocess.run(command, capture_output=True, text=True)
                if done.returncode != 0:
                    result["error"] = f"{shlex.join(command)}: {done.stderr.strip() or done.returncode}"
                    return result
            result["ran"] = True
        return result
    if kind == "cron":
        line = crontab_line()
        result = {"kind": kind, "line": line, "commands": ["crontab -"], "ran": False}
        if not write:
            return result
        if shutil.which("crontab") is None:
            raise SeqInputError(f"no crontab command on this machine; add this line with crontab -e: {line}")
        listed = subprocess.run(["crontab", "-l"], capture_output=True, text=True)
        home = _environment()["SEQ_HOME"]
        kept = [
            entry
            for entry in (listed.stdout.splitlines() if listed.returncode == 0 else [])
            if not entry.endswith(f"{TAG} {home}")
        ]
        subprocess.run(["crontab", "-"], input="\n".join([*kept, line]) + "\n", text=True, check=True)
        result["ran"] = True
        return result
    raise SeqInputError(f"scheduler install {kind!r}: expected systemd or cron.")
