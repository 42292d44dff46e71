"""Run a Python script in this process, as exec would.

A fork server's child (autograder/sandbox/forkserver/) already holds what the server imported;
exec would throw that away. So the fork server's child runs the jail script in-process, and the
jail (autograder/sandbox/jail.py) runs the runner in-process when its policy says ``in_process``.
This is about cold-start speed only: what protects the grader is the jail's, and runs before
``run_script``.

Standard library only: the jail loads this file by path (``jail.sibling``), before the private root
hides it, under a name of its own that a fork server's children keep in ``sys.modules``.
"""
from __future__ import annotations

import os
import sys


def run_main(path: str) -> None:
    """Run the script at ``path`` as ``__main__`` (``runpy.run_path``)."""
    import runpy
    runpy.run_path(path, run_name="__main__")


def settle_threads() -> None:
    """Set torch's compute threads in this forked process, as a fresh interpreter would.

    Libraries the server preloaded read OMP_NUM_THREADS with the server's environment; this applies
    the child's own value (or keeps the current count). It also rebuilds, on this one thread, the
    thread pool torch marks as stale at each fork: left to the program, two of its threads touching
    torch at once can both see the stale pool and one raises "Invalid thread pool!"."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    value = os.environ.get("OMP_NUM_THREADS", "")
    torch.set_num_threads(int(value) if value.isdigit() and int(value) > 0 else torch.get_num_threads())


def run_script(argv: list[str]) -> None:
    """Run ``[python, -FLAGS..., SCRIPT, ARGS...]`` in this process, as exec would; never returns."""
    settle_threads()
    args = argv[1:]
    while args and args[0].startswith("-"):
        if "B" in args.pop(0):
            sys.dont_write_bytecode = True
    code = 0
    try:
        sys.argv = list(args)
        run_main(args[0])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # as the interpreter does: traceback, status 1
        import traceback
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code & 0xFF)
