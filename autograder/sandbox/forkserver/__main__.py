"""``python -m autograder.sandbox.forkserver SOCK_FD PRELOAD CLIENT_PID LATER HUGE_PAGES``: the server.

Started by ``ForkServer`` (forkserver/client.py): SOCK_FD its end of the socket pair, PRELOAD and
LATER comma-separated module names, CLIENT_PID the process it dies with, HUGE_PAGES 1 or 0.
"""
import os
import sys

from autograder.sandbox.forkserver import server


def _names(index: int) -> list[str]:
    return [m for m in sys.argv[index].split(",") if m] if len(sys.argv) > index else []


server.serve(int(sys.argv[1]), _names(2), int(sys.argv[3]) if len(sys.argv) > 3 else None, _names(4),
             sys.argv[5] != "0" if len(sys.argv) > 5 else True)
os._exit(0)   # no interpreter shutdown: tearing down the preloaded libraries takes long (docs/performance.md)
