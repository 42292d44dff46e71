"""What a forked child of the fork server does before and while it runs its argv.

It becomes ``python ARGV`` as a freshly started interpreter would be: its own session (when
asked), death with the server, the descriptors the request carried under their numbers (every
other one closed), resource limits, environment, working folder, thread count, signal
dispositions and standard streams of its own; the grader's modules (``autograder.*``) dropped
from ``sys.modules``; then ``-m MODULE``, ``-c CODE`` or ``SCRIPT`` run with the interpreter's
options -u -B -E -s -I -O honoured, and the exit status an interpreter would give. A script runs
with the code the server compiled (autograder/sandbox/inprocess.py).
"""
from __future__ import annotations

import os
import signal
import sys

from autograder.sandbox import jail

_PR_SET_PDEATHSIG = 1


def set_pdeathsig() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (best effort elsewhere)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def run(request: dict, fds: list[int], base_path: list[str], server_pid: int) -> None:
    """In the forked child: become ``python ARGV`` and run it; never returns."""
    import resource
    pass_fds = request["pass_fds"]
    if request["session"]:
        os.setsid()
    set_pdeathsig()
    if os.getppid() != server_pid:   # the server died before the line above: die with it
        os._exit(137)
    # Move every received fd above the targets first, so no dup2 below clobbers one still needed.
    import fcntl
    floor = max([2, *pass_fds]) + 1
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, floor) for fd in fds]
    for fd in set(fds):
        os.close(fd)
    stdin, stdout, stderr = high[:3]
    for target, fd in ((0, stdin), (1, stdout), (2, stderr), *zip(pass_fds, high[4:], strict=True)):
        os.dup2(fd, target)
        os.set_inheritable(target, True)
    keep = {0, 1, 2, *pass_fds}
    _close_others(keep)
    for number, (soft, hard) in request["rlimits"].items():
        resource.setrlimit(int(number), (soft, hard))
    env = request["env"]
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    if request["cwd"] is not None:
        os.chdir(request["cwd"])
    jail.sibling("inprocess.py").settle_threads()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _fresh_streams()
    drop_grader_modules()    # none left unless the server imported one since it was ready
    code = _run_argv(request["argv"], base_path)
    _flush_and_exit(code)


def drop_grader_modules() -> None:
    """Take the grader's modules (``autograder.*``) out of ``sys.modules``, as a fresh interpreter
    has none: what imports one again gets its own copy. The code that still runs keeps the
    modules it holds."""
    for name in [m for m in sys.modules if m == "autograder" or m.startswith("autograder.")]:
        del sys.modules[name]


def _close_others(keep: set[int]) -> None:
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        open_fds = range(3, 1024)
    for fd in open_fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _fresh_streams() -> None:
    import io
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)),
                                 encoding="utf-8", errors="strict")
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)),
                                  encoding="utf-8", errors="strict", line_buffering=os.isatty(1))
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
                                  encoding="utf-8", errors="backslashreplace", write_through=True)
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr


def _run_argv(argv: list[str], base_path: list[str]) -> int:
    """Run ``argv[1:]`` as the interpreter would (options -u -B -E -s -I -O are accepted)."""
    import runpy
    args = argv[1:]
    isolated = no_site = False
    while args and args[0].startswith("-") and args[0] not in ("-m", "-c", "-"):
        flag = args.pop(0)
        if "u" in flag:
            sys.stdout.reconfigure(write_through=True)
        if "B" in flag:
            sys.dont_write_bytecode = True
        isolated = isolated or "I" in flag or "P" in flag
        no_site = no_site or "S" in flag
    if no_site:   # as `python -S`: no site-packages (the program adds what it needs)
        base_path = [p for p in base_path if not p.rstrip("/").endswith(("site-packages", "dist-packages"))]
    extra = [] if isolated else [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]

    def first(entry: str) -> list[str]:   # as -I / -P: no script folder or cwd in front
        return [] if isolated else [entry]

    try:
        if args[:1] == ["-m"] and len(args) >= 2:
            sys.argv = [args[1], *args[2:]]
            sys.path[:] = [*first(os.getcwd()), *extra, *base_path]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        elif args[:1] == ["-c"] and len(args) >= 2:
            sys.argv = ["-c", *args[2:]]
            sys.path[:] = [*first(""), *extra, *base_path]
            namespace = {"__name__": "__main__", "__builtins__": __builtins__}
            exec(compile(args[1], "<string>", "exec"), namespace)
        elif args:
            sys.argv = list(args)
            sys.path[:] = [*first(os.path.dirname(os.path.abspath(args[0]))), *extra, *base_path]
            jail.sibling("inprocess.py").run_main(args[0])
        else:
            print("forkserver: nothing to run", file=sys.stderr)
            return 2
    except SystemExit as exc:
        return _exit_code(exc.code)
    except KeyboardInterrupt:
        return 130
    except BaseException:
        import traceback
        traceback.print_exc()
        return 1
    return 0


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except Exception:
        pass
    return 1


def _flush_and_exit(code: int) -> None:
    try:
        import atexit
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)
