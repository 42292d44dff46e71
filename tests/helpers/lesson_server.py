"""The lesson's fork server, as the modules that grade many submissions in-process start it."""
from __future__ import annotations

from autograder.core import course, lesson
from autograder.sandbox import forkserver


def keep() -> forkserver.ForkServer:
    """This process's fork server, importing what the lesson's children need (torch among them),
    started unless one is running.

    It is not stopped after the module: the next module that grades in the same pytest worker
    forks its children from it instead of starting another and importing torch again (about 2.5
    CPU s a start). The server stops when the worker exits (autograder/sandbox/forkserver/client.py);
    tests of the server itself stop and start their own.
    """
    return forkserver.start(**lesson.server_imports(course.load().assignment()))
