"""Where an output came from: the commit of the code that wrote it, and the command."""

from __future__ import annotations

import datetime
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).resolve().parent


def commit() -> str:
    """The git commit of the source tree (with `-dirty` when files differ from it), or `unknown`
    (an installed copy outside a repository)."""
    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            cwd=SOURCE,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


def command_line() -> str:
    """The command that is running, as a user would type it (`symgen ...`)."""
    args = sys.argv[1:]
    return "symgen " + " ".join(shlex.quote(a) for a in args) if args else "symgen"


def stamp(command: str, **extra: Any) -> dict[str, Any]:
    return {
        "commit": commit(),
        "command": command,
        "written": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        **extra,
    }
