"""The hardened sandbox, grader side: the command that jails a child, and what the child leaves.

``wrap(argv, ...)`` turns the command that starts the child (autograder/runtime/runner.py) into one
that runs it through autograder/sandbox/jail.py, with the policy of autograder/sandbox/policy.py.
While and after the child runs: ``live_view`` (its working folder as it sees it), ``strays``,
``StrayWatch`` and ``sweep`` (the processes a call left running, killed after every call), ``reap``
(what is left once the child is gone). What the jail can do depends on the machine, so
``protection()`` (autograder/sandbox/probe.py) finds out once per grader process by starting a probe
through the real jail and asking it what it sees (its uid, whether the grader's files and the
network are reachable):

- **namespaces** (the default wherever the kernel allows it: root on a plain Linux machine, or any
  user where unprivileged user namespaces are enabled): own pid, mount, network, IPC and UTS
  namespaces; a private root holding only the system, Python, the venv, the project's
  ``shared/`` and the working folder; no network at all; every capability dropped;
- **plain** (namespaces refused, e.g. a container whose seccomp profile blocks them, or
  the SANDBOX setting ``plain``): rlimits and, as root, an unprivileged uid; where the kernel has
  Landlock, a ruleset that lets the child read only what the private root would show and write
  only its working folder (and, from Landlock ABI 4, no TCP); otherwise the grader's files are
  protected only by their permissions, and the network is not isolated.

In both, a seccomp filter refuses what graded code never needs (autograder/sandbox/confine.py),
and, where the grader may make one, a memory cgroup bounds the child's memory in total
(autograder/sandbox/cgroup.py). With namespaces the working folder, /tmp and /dev/shm are tmpfs
mounts of their own with a size and an inode limit (``JailLimits.disk_bytes``, ``disk_inodes``).

In both, where the grader may make one, a pids cgroup bounds the child's processes and threads
in the kernel, whatever its uid or user namespace (autograder/sandbox/pidsgroup.py). Behind it,
when the grader runs as root the child gets a uid of its own (``UID_BASE`` + the launcher's pid,
unique among live children), so the per-uid process limit (RLIMIT_NPROC) counts that child's
processes and threads only: a fork bomb fails fast without starving a neighbour.
``describe()`` is the line the results carry: what protection was in force, as measured.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

from autograder.sandbox import cgroup, pidsgroup, policy
from autograder.sandbox.policy import UID_BASE, JailLimits, group_name
from autograder.sandbox.probe import mode_wanted, protection

#: The kernel's flag (in /proc/PID/stat) of a process that is already on its way out.
PF_EXITING = 0x4


def _process_cap(limits: JailLimits) -> int:
    """RLIMIT_NPROC for the child: its own budget when it has a uid or a user namespace of its own,
    otherwise what the grader's user already runs plus that budget (the limit is per uid)."""
    if os.getuid() == 0 or mode_wanted() != "plain" and protection().mode == "namespaces":
        return limits.processes
    return _threads_of_uid(os.getuid()) + limits.processes


def jail_tasks(namespaces: bool) -> int:
    """Tasks of the jail's own in a child's pids cgroup besides the child's: with namespaces the
    launcher and the reaper (pid 1), one thread each; without, none (the launcher becomes the child)."""
    return 2 if namespaces else 0


def _threads_of_uid(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            count += int(fields.get("Threads", "1").strip())
    return count


def wrap(argv: list[str], workdir: Path, keep_fds=(), limits: JailLimits | None = None, *,
         in_process: bool = False) -> list[str]:
    """The command that runs ``argv`` in the sandbox, with ``workdir`` as its private folder.
    ``in_process``: the caller starts the command by forking a fork server (policy.build)."""
    prot = protection()
    limits = limits or JailLimits()
    namespaces = prot.mode == "namespaces"
    groups = [cgroup.create(group_name(workdir), limits.memory_bytes) if prot.memory_cgroup else None,
              pidsgroup.create(group_name(workdir), limits.processes + jail_tasks(namespaces))
              if prot.pids_cgroup else None]
    spec = policy.build(workdir, keep_fds, limits, processes=_process_cap(limits), namespaces=namespaces,
                        cgroups=[g for g in groups if g], in_process=in_process)
    return [sys.executable, "-I", "-S", "-B", str(policy.JAIL), json.dumps(spec), "--", *argv]


def live_view(launcher_pid: int, workdir: Path) -> Path:
    """``workdir`` as the child sees it while it runs: in namespaces mode its own tmpfs, reached
    through its init's root (/proc/PID/root); else (or once it is gone) ``workdir`` itself."""
    if protection().mode == "namespaces":
        for init in _children(launcher_pid):
            view = Path(f"/proc/{init}/root{os.path.realpath(workdir)}")
            try:
                if view.is_dir():
                    return view
            except OSError:
                pass
    return Path(workdir)


def reap(launcher_pid: int, workdir: Path) -> None:
    """After a child is gone: kill whatever its uid still runs (plain mode as root: a grandchild
    that left the process group), remove its memory cgroup and the jail's empty mount point."""
    if os.getuid() == 0 and protection().mode == "plain":
        _kill_uid(UID_BASE + launcher_pid)
    if protection().memory_cgroup:
        cgroup.remove(group_name(workdir))
    if protection().pids_cgroup:
        pidsgroup.remove(group_name(workdir))
    try:
        os.rmdir(os.path.realpath(workdir).rstrip("/") + ".root")
    except OSError:
        pass


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (all its threads'), from /proc; [] when it is gone."""
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def _alive(pid: int) -> bool:
    """Not on its way out: neither a zombie, nor exiting (a killed process may take a while to
    unmap a large address space), nor holding a SIGKILL it has not yet acted on."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/status") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
    except (OSError, IndexError, ValueError):
        return False
    pending = int(status.get("ShdPnd", "0"), 16) | int(status.get("SigPnd", "0"), 16)
    return (fields[0] not in ("Z", "X") and not int(fields[6]) & PF_EXITING
            and not pending & (1 << (signal.SIGKILL - 1)))


def _descendants(pid: int) -> list[int]:
    found, todo = [], _children(pid)
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(_children(p))
    return found


def _ns_pid(pid: int) -> int | None:
    """``pid``'s number inside its innermost pid namespace (NSpid's last field)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except OSError:
        pass
    return None


def strays(launcher_pid: int) -> list[int]:
    """Processes of a child's sandbox besides its init and the runner: whatever student code
    started and left running (the runner is pid 2 of the namespace: init's first child).

    A walk down /proc's children lists says quickly whether there are any; the lists are not
    reliable while processes fork, so when there are, every process of the machine is checked
    for membership of the sandbox's pid namespace."""
    if protection().mode != "namespaces":
        return [p for p in _descendants(launcher_pid) if _alive(p)]
    out = []
    for init in _children(launcher_pid):
        keep = {init}
        quick = []
        for child in _children(init):
            if _ns_pid(child) == 2:
                keep.add(child)
                quick.extend(_descendants(child))
            else:
                quick.append(child)
                quick.extend(_descendants(child))
        if quick:
            quick = [p for p in _namespace_members(init) if p not in keep]
        out.extend(p for p in quick if _alive(p))
    return out


class StrayWatch:
    """The look for strays after every call of one child, made cheap.

    The sandbox's tree is fixed once the child runs: the launcher's only child is init (a bare
    reaper, the grader's own code) and init's only child is the runner (pid 2 of the namespace).
    The first look finds the two; each later look reads init's children list (it must be the
    runner alone: an orphan that left the runner is re-parented to init) and the runner's
    threads' lists (they must be empty). Two reads and a folder listing instead of ``strays``'s
    walk; anything else is handed to ``strays``, which decides."""

    def __init__(self, launcher_pid: int):
        self.launcher = launcher_pid
        self.tree: tuple[int, int] | None = None     # (init, runner), host pids

    def strays(self) -> list[int]:
        """As ``strays(launcher_pid)``; [] at the cost of the quick look when there are none."""
        if protection().mode != "namespaces":
            return strays(self.launcher)
        if self.tree is None:
            inits = _children(self.launcher)
            kids = _children(inits[0]) if len(inits) == 1 else []
            if len(kids) != 1 or _ns_pid(kids[0]) != 2:
                return strays(self.launcher)
            self.tree = (inits[0], kids[0])
        init, runner = self.tree
        try:
            with open(f"/proc/{init}/task/{init}/children") as f:
                alone = f.read().split() == [str(runner)]
        except OSError:
            alone = False
        if alone and not _children(runner):
            return []
        return strays(self.launcher)


def _namespace_members(init: int) -> list[int]:
    """Every process in the pid namespace whose init is ``init`` (host pids)."""
    try:
        ns = os.readlink(f"/proc/{init}/ns/pid")
    except OSError:
        return []
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") == ns:
                    members.append(int(entry))
            except OSError:
                pass
    return members


def sweep(launcher_pid: int) -> int:
    """Kill the strays of a child after a call returned: no process outlives the call that
    started it (a fork bomb's remains stop eating the CPU the next calls need). Each stray is
    stopped first, until three looks in a row find none still running, so none can fork a
    replacement while the others are killed; the whole pass repeats while a look afterwards
    still finds one (a fork that was in flight). Returns how many were killed."""
    killed = 0
    for _ in range(10):
        stopped: set[int] = set()
        quiet = 0
        for _ in range(200):
            found = [p for p in strays(launcher_pid) if p not in stopped]
            if not found:
                quiet += 1
                if quiet >= 3:
                    break
                time.sleep(0.002)
                continue
            quiet = 0
            for pid in found:
                try:
                    os.kill(pid, signal.SIGSTOP)
                    stopped.add(pid)
                except OSError:
                    pass
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        killed += len(stopped)
        time.sleep(0.005 if stopped else 0)
        if not stopped or not strays(launcher_pid):
            break
    return killed


def _kill_uid(uid: int) -> None:
    pid = os.fork()
    if pid == 0:
        try:
            os.setresuid(uid, uid, uid)      # kill(-1) then reaches exactly this uid's processes
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def describe(sandbox_limits) -> str:
    """The results' line for a Sandbox with ``sandbox_limits`` (autograder.sandbox.launch.Limits)."""
    return protection().describe(JailLimits.from_sandbox(sandbox_limits))
