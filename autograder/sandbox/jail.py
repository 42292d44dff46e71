"""The jail: run one command (the child that executes student code) with the sandbox applied.

Run as ``python -I -S autograder/sandbox/jail.py POLICY_JSON -- ARGV...`` (autograder/sandbox/isolation.py
builds the policy and the command line; this file imports only the standard library, so the
jail needs nothing of the grader). With namespaces (``"namespaces": true``) it goes:

    launcher (grader's user, outside)        waits; relays the child's exit status or signal
      └─ init  (pid 1 of a new pid, mount, network, IPC and UTS namespace; as a non-root grader,
         │      also a new user namespace)   builds a private root (read-only system, Python,
         │      venv and project ``shared/``; the working folder read-write; fresh /proc, /dev,
         │      /tmp), chroots into it, drops every capability, then execs a bare reaper
         │      (REAPER); when it exits the kernel kills everything left in the namespace, so no
         │      grandchild survives
         └─ child: rlimits, then (grader is root) an unprivileged uid of its own; no capabilities,
                no new privileges; execs ARGV (or, when the policy says ``in_process``: the
                launcher forked this jail from a fork server, runs the ARGV script in this
                process, keeping what the server imported: autograder/sandbox/inprocess.py)

The private root and its quotas are autograder/sandbox/rootfs.py's: the working folder is a tmpfs
of its own in the child's mount namespace (``"workdir_quota"``: bytes and inodes, like isolate's
disk quota; the submission's files are copied in), and /tmp and /dev/shm are size- and
inode-limited tmpfs too. With ``"cgroups"`` (the memory and pids cgroups the grader made,
autograder/sandbox/cgroup.py and pidsgroup.py) the launcher first joins them, so everything the
child starts counts against one memory limit and one bound on processes and threads. Last
before student code: the seccomp filter (``"seccomp"``) and, in plain mode, the Landlock ruleset
(``"landlock"``), both from autograder/sandbox/confine.py.
rootfs.py and confine.py are loaded by path when this file is (``sibling``).

Without namespaces (``"namespaces": false``) the launcher applies the rlimits and the uid and
execs ARGV itself. A step that fails stops the launch with one line on stderr and exit status
125: the jail never runs student code with less protection than the grader reported.
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import sys

JAIL_FAILED = 125   # exit status when the sandbox could not be set up (nothing of the student ran)

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
CLONE_NEWCGROUP = 0x02000000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38

#: pid 1's program once the child runs: reap everything; when the child ends, report its wait
#: status on the status pipe and exit (the kernel then kills what is left in the namespace).
REAPER = """import os, sys
child, fd = int(sys.argv[1]), int(sys.argv[2])
while True:
    try:
        pid, status = os.wait()
    except ChildProcessError:
        os._exit(125)
    if pid == child:
        os.write(fd, b"%d\\n" % status)
        os._exit(0)
"""

_libc = ctypes.CDLL(None, use_errno=True)


def sibling(filename: str):
    """autograder/sandbox/<filename> (standard library only) as a module kept in sys.modules under a
    name of its own, ``_why17_<stem>``: a fork server loads it once and its children find it there
    (they drop every ``autograder.*`` module), and the private root need not show it."""
    name = "_why17_" + filename.removesuffix(".py")
    if name not in sys.modules:
        import types
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), filename)
        module = types.ModuleType(name)
        module.__file__ = path
        with open(path, "rb") as f:
            exec(compile(f.read(), path, "exec"), module.__dict__)
        sys.modules[name] = module
    return sys.modules[name]


confine = sibling("confine.py")
rootfs = sibling("rootfs.py")


class JailError(Exception):
    """A sandbox step failed; the message names the step and the path."""


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise JailError(f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)), f"prctl {option}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_bounding_set() -> None:
    """Empty the bounding set (no exec can ever regain a capability); needs CAP_SETPCAP, so first."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except OSError:
        last = 63
    for cap in range(last + 1):
        if _libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0:
            err = ctypes.get_errno()
            if err != 22:             # EINVAL: no such capability on this kernel
                raise JailError(f"dropping capability {cap}: {os.strerror(err)}")


def drop_capabilities() -> None:
    """Empty the effective, permitted and inheritable sets; no new privileges from now on."""
    header = _CapHeader(0x20080522, 0)            # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def apply_limits(limits: dict) -> None:
    """Set each rlimit (soft = hard); names as in ``resource`` without the prefix."""
    import resource
    for name, value in limits.items():
        which = getattr(resource, f"RLIMIT_{name.upper()}")
        try:
            resource.setrlimit(which, (int(value), int(value)))
        except (ValueError, OSError) as exc:
            raise JailError(f"rlimit {name}={value}: {exc}") from None


def become(uid: int) -> None:
    """Root only: drop supplementary groups, then take ``uid`` as uid and gid."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def close_fds(keep) -> None:
    keep = sorted({0, 1, 2, *keep})
    start = 0
    for fd in keep:
        if fd > start:
            os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, 1 << 16)


def join_cgroup(procs: str) -> None:
    """Move this process into the cgroup whose ``cgroup.procs`` file is ``procs`` (what it starts
    from now on is counted there too)."""
    try:
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    except OSError as exc:
        raise JailError(f"joining the cgroup {os.path.dirname(procs)}: {exc.strerror}") from None


def confine_last(policy: dict) -> None:
    """The Landlock ruleset (when the policy has one) and the seccomp filter: the last steps."""
    rules = policy.get("landlock")
    if rules:
        try:
            confine.landlock(rules["read"], rules["write"], rules.get("list", ()))
        except confine.ConfineError as exc:
            raise JailError(str(exc)) from None
    if policy.get("seccomp"):
        try:
            confine.install_seccomp()
        except confine.ConfineError as exc:
            raise JailError(str(exc)) from None


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def own_tree(path: str, uid: int) -> None:
    """Give the working folder to the sandbox uid (root only), without following links."""
    os.chown(path, uid, uid, follow_symlinks=False)
    for top, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(top, name), uid, uid, follow_symlinks=False)


# --------------------------------------------------------------------------- the process tree

def _relay(status: int) -> None:
    """End this process the way ``status`` (a wait status) says the child ended."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else JAIL_FAILED)


def _exec(policy: dict, argv: list[str]) -> None:
    """The last steps in the process that becomes the child, then exec (never returns)."""
    apply_limits(policy["limits"])
    if policy.get("namespaces") or os.getuid() == 0:
        drop_bounding_set()
    if policy.get("uid") is not None:
        become(policy["uid"])
    drop_capabilities()
    confine_last(policy)
    close_fds(policy.get("keep_fds", ()))
    env = dict(os.environ)
    env.update(policy.get("env", {}))
    if policy.get("in_process"):      # forked from a fork server: keep what it imported, no exec
        os.environ.clear()
        os.environ.update(env)
        sibling("inprocess.py").run_script(argv)
    os.execve(argv[0], argv, env)


def _init(policy: dict, argv: list[str], status_w: int) -> None:
    """pid 1 of the new namespaces: build the root, start the child, reap, report its status."""
    unshare(CLONE_NEWNS)
    try:
        rootfs.build_root(policy)
    except rootfs.RootError as exc:
        raise JailError(str(exc)) from None
    if policy.get("uid") is not None:
        own_tree(policy["workdir"], policy["uid"])
    pid = os.fork()
    if pid == 0:
        os.close(status_w)
        _exec(policy, argv)
    drop_bounding_set()
    drop_capabilities()
    # Become a bare reaper: a fresh interpreter with nothing of the launcher in its memory,
    # command line or environment (the child could read them through /proc).
    close_fds([status_w])
    os.set_inheritable(status_w, True)
    os.execve(sys.executable, [sys.executable, "-I", "-S", "-c", REAPER, str(pid), str(status_w)],
              {"PATH": "/usr/bin:/bin"})


def run(policy: dict, argv: list[str]) -> None:
    """Apply ``policy`` and run ``argv`` (never returns)."""
    uid = os.getuid()
    if policy.get("in_process"):      # loaded now: the private root does not show it
        sibling("inprocess.py")
    for procs in policy.get("cgroups", ()):
        join_cgroup(procs)
    if policy.get("uid") == "auto":   # root: a uid of its own for this child (see isolation.py)
        policy["uid"] = policy["uid_base"] + os.getpid() if uid == 0 else None
    if not policy.get("namespaces"):
        if policy.get("uid") is not None:
            own_tree(policy["workdir"], policy["uid"])
        os.chdir(policy["workdir"])
        _exec(policy, argv)
    # The mount namespace is pid 1's alone (below), so the launcher can remove the mount point.
    # A cgroup namespace rooted at the group just joined: /proc/self/cgroup shows '/', no path of
    # the grader's or of another child's group.
    flags = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP
    if uid != 0:
        flags |= CLONE_NEWUSER
    gid = os.getgid()
    os.makedirs(policy["jail_root"], mode=0o700, exist_ok=True)   # the mount point of the private root
    unshare(flags)
    if uid != 0:                      # the same uid and gid inside: nothing else is mapped
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    status_r, status_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(status_r)
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)   # the launcher killed -> the namespace dies
            _init(policy, argv, status_w)
        except BaseException as exc:  # report any setup failure in one line
            _fail(exc)
    os.close(status_w)
    for fd in policy.get("keep_fds", ()):
        os.close(fd)
    with os.fdopen(status_r) as f:
        text = f.read().strip()
    os.waitpid(pid, 0)
    try:
        os.rmdir(policy["jail_root"])
    except OSError:
        pass
    if not text:
        os._exit(JAIL_FAILED)
    _relay(int(text))


def _fail(exc: BaseException) -> None:
    message = str(exc) if isinstance(exc, (JailError, OSError)) else f"{type(exc).__name__}: {exc}"
    try:
        os.write(2, f"sandbox: could not start the sandboxed process: {message}\n".encode())
    finally:
        os._exit(JAIL_FAILED)


def main(args: list[str]) -> None:
    if len(args) < 3 or args[1] != "--":
        _fail(JailError("usage: sandbox_jail.py POLICY_JSON -- ARGV..."))
    try:
        run(json.loads(args[0]), args[2:])
    except BaseException as exc:
        _fail(exc)


if __name__ == "__main__":
    main(sys.argv[1:])
