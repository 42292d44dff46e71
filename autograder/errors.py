"""Errors the command line turns into one line and exit status 2, never a traceback."""


class UsageError(Exception):
    """Bad usage or bad input: no such path, unknown assignment, unreadable zip, invalid config."""
