"""Errors a user can cause. The CLI prints them as one line and exits non-zero, without a traceback."""

from __future__ import annotations

import os
from pathlib import Path


class UserError(Exception):
    """Bad input from the user: a missing file, an unknown key, an impossible size. Say what to fix."""


def writable_dir(path: Path, what: str = "--out") -> Path:
    """Create `path` (and its parents) if needed and make sure files can be written in it."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"{what} {path}: cannot create the folder ({e.strerror})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UserError(f"{what} {path}: the folder is not writable; choose another")
    return path
