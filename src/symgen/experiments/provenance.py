"""Where an output came from: the commit of the code that wrote it, and the command.

The command is recorded as the user would retype it from the output's parent folder: `--out` and
every other path relative to that folder, never an absolute path of the machine that wrote it.
A commit is `-dirty` when tracked files differ from it; such an output cannot be traced to its code,
so `symgen report` refuses to write a book into a folder the repository tracks (docs/results) from
one, and anywhere else says so in one line.
"""

from __future__ import annotations

import datetime
import os
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from symgen.errors import UserError

SOURCE = Path(__file__).resolve().parent
DIRTY = "-dirty"


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None


def commit(source: Path | None = None) -> str:
    """The git commit of the source tree (with `-dirty` when tracked files differ from it), or
    `unknown` (an installed copy outside a repository)."""
    done = _git(["describe", "--always", "--dirty", "--abbrev=12"], source or SOURCE)
    return done.stdout.strip() if done and done.returncode == 0 and done.stdout.strip() else "unknown"


def command_line(out: Path | None = None, paths: Iterable[Path] = ()) -> str:
    """The command that is running, as a user would retype it (`symgen ...`) from the folder that holds
    `out`: `out`, the other `paths` the command was given (as given) and any absolute path among its
    arguments (`--set key=/abs/path` too) are written relative to that folder."""
    args = sys.argv[1:]
    if out is not None:
        args = portable(args, out, paths)
    return "symgen " + " ".join(shlex.quote(a) for a in args) if args else "symgen"


def portable(args: list[str], out: Path, paths: Iterable[Path] = ()) -> list[str]:
    """`args` with their paths relative to OUT's parent folder (see `command_line`)."""
    base = os.path.dirname(os.path.abspath(out))
    named = {os.path.abspath(p) for p in [out, *paths]}

    def rewrite(value: str) -> str | None:
        if value and (os.path.isabs(value) or os.path.abspath(value) in named):
            return os.path.relpath(os.path.abspath(value), base)
        return None

    out_args = []
    for arg in args:
        whole = rewrite(arg)
        if whole is None and "=" in arg:  # --out=PATH, or a --set KEY=PATH
            key, value = arg.split("=", 1)
            tail = rewrite(value)
            whole = None if tail is None else f"{key}={tail}"
        out_args.append(arg if whole is None else whole)
    return out_args


def dirty_note(commits: Mapping[str, str]) -> str:
    """One line naming what was written at a `-dirty` commit ('' when none was): {what: commit}."""
    dirty = [f"{what} at {c}" for what, c in commits.items() if c.endswith(DIRTY)]
    if not dirty:
        return ""
    return (
        f"symgen: note: {'; '.join(dirty)}: tracked files differed from that commit, so the output "
        "cannot be traced to its code; commit first and write it again for a result to keep"
    )


def refuse_dirty_book(out: Path, commits: Mapping[str, str], source: Path | None = None) -> None:
    """Refuse, in one line, a book written into a folder the source's repository tracks (not ignored:
    docs/results) while it or one of its parts records a `-dirty` commit ({what: commit}): what the
    repository commits must name a commit that holds the code that wrote it."""
    dirty = [(what, c) for what, c in commits.items() if c.endswith(DIRTY)]
    if not dirty:
        return
    top = _git(["rev-parse", "--show-toplevel"], source or SOURCE)
    if top is None or top.returncode != 0 or not top.stdout.strip():
        return
    repo, place = Path(top.stdout.strip()).resolve(), Path(out).resolve()
    if not place.is_relative_to(repo):
        return
    ignored = _git(["check-ignore", "-q", "--no-index", str(place / "report.html")], repo)
    if ignored is not None and ignored.returncode == 0:
        return
    what, at = dirty[0]
    raise UserError(
        f"report --out {out}: {what} records commit {at} (tracked files differed from it); a book in a "
        "folder the repository tracks must name clean commits: commit the changes (or rebuild the part "
        "from a clean checkout) and run it again"
    )


def stamp(command: str, **extra: Any) -> dict[str, Any]:
    return {
        "commit": commit(),
        "command": command,
        "written": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        **extra,
    }
