"""A fork server: import the heavy libraries once, then start each sandboxed child by forking.

    client.py   this process's server (``start``, ``ensure``, ``active``, ``stop``) and its handle
                ``ForkServer`` (``spawn`` a child, ``is_ready``, ``close``)
    process.py  ``ForkedProcess``: a child it started, with the ``subprocess.Popen`` methods
    wire.py     the messages between client and server (length-prefixed JSON, SCM_RIGHTS)
    server.py   the server's process: preload and later, the serving loop, huge pages, reaping
    child.py    what a forked child does to become ``python ARGV``
    __main__.py ``python -m autograder.sandbox.forkserver ...``: how the client starts the server

What it imports beyond what every sandboxed child runs comes from the grader package
(the Lesson's server_preload and server_later: autograder/core/lesson.py). All of it is about speed; what protects
the grader is the jail's (autograder/sandbox/jail.py), which every child still passes through.
"""
from autograder.sandbox.forkserver.client import (
    DEVNULL,
    ENV,
    LATER,
    PIPE,
    PRELOAD,
    SERVER_ENV,
    STDOUT,
    ForkServer,
    ForkServerError,
    active,
    ensure,
    server_environment,
    start,
    stop,
)
from autograder.sandbox.forkserver.process import ForkedProcess
from autograder.sandbox.forkserver.wire import MAX_FDS, STOP_TIMEOUT_S

__all__ = ["DEVNULL", "ENV", "LATER", "MAX_FDS", "PIPE", "PRELOAD", "SERVER_ENV", "STDOUT", "STOP_TIMEOUT_S",
           "ForkServer", "ForkServerError", "ForkedProcess", "active", "ensure", "server_environment", "start",
           "stop"]
