"""Errors a user can cause. The CLI prints them as one line and exits non-zero, without a traceback."""


class UserError(Exception):
    """Bad input from the user: a missing file, an unknown key, an impossible size. Say what to fix."""
