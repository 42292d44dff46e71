"""One memory cgroup per sandboxed child: the whole submission's memory under one limit.

The jail's rlimits are per process (address space) and per uid (processes), so a child that
starts N processes may hold N times the address-space limit. Where the machine lets the grader
make a memory cgroup, each child gets one (``create``): the jail's launcher joins it before anything
else (autograder/sandbox/jail.py ``join_cgroup``), so every process and thread the child starts,
and the tmpfs pages of its working folder and /tmp, count against one limit; past it the kernel's
OOM killer ends a process of that group only. ``remove`` deletes the group once the child is gone.

Two layouts are recognised, from /proc/self/cgroup:

- **v1** (a ``memory`` hierarchy): a group under the grader's own memory group, with
  ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes`` where swap is accounted);
- **v2** (the unified hierarchy): a group under the grader's own group, with ``memory.max`` and
  ``memory.swap.max`` = 0, where that group already delegates the memory controller to its
  children (``cgroup.subtree_control`` lists ``memory``: e.g. a ``systemd-run -p Delegate=yes``
  scope whose processes sit in a leaf below it, or a container given a cgroup namespace).

Anywhere else (no permission, no memory controller, a v2 group that holds the grader itself and so
cannot enable controllers for its children) ``available()`` says why, and the bound that holds
is the per-process one (probe.Protection.describe).
"""
from __future__ import annotations

import functools
import os
import time

#: Where the hierarchies are mounted: v1 per controller, v2 (or hybrid's unified) at one of these.
V1_MEMORY = "/sys/fs/cgroup/memory"
V2_MOUNTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
#: Prefix of the groups made here (the rest is the working folder's name: unique among live children).
PREFIX = "why17-"
#: Seconds ``remove`` waits for the last processes of a group to be gone.
REMOVE_WAIT_S = 2.0


def _own_paths() -> dict[str, str]:
    """Controller (or '' for v2) -> this process's group path, from /proc/self/cgroup."""
    out = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                number, controllers, path = line.rstrip("\n").split(":", 2)
                for name in controllers.split(",") if controllers else [""]:
                    out[name] = path
    except (OSError, ValueError):
        pass
    return out


def candidates(controller: str = "memory", v1_mount: str = V1_MEMORY) -> list[tuple[str, str]]:
    """(version, folder where groups of ``controller`` would be made), most likely first: under
    this process's own group of the v1 hierarchy at ``v1_mount``, or of the unified one."""
    own = _own_paths()
    found = []
    if controller in own and os.path.isdir(v1_mount):
        found.append(("v1", os.path.normpath(v1_mount + own[controller])))
    if "" in own:
        for mount in V2_MOUNTS:
            folder = os.path.normpath(mount + own[""])
            if os.path.exists(os.path.join(folder, "cgroup.subtree_control")):
                found.append(("v2", folder))
                break
    return found


def _limit_files(version: str) -> tuple[str, ...]:
    return ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes") if version == "v1" else ("memory.max",)


def _make(version: str, base: str, name: str, limit_bytes: int) -> str:
    """Make group ``name`` under ``base`` with ``limit_bytes``; its folder. OSError when refused."""
    if version == "v2":
        with open(os.path.join(base, "cgroup.subtree_control")) as f:
            if "memory" not in f.read().split():
                raise PermissionError(f"{base} does not delegate the memory controller to its children")
    folder = os.path.join(base, name)
    os.mkdir(folder, 0o755)
    try:
        for file in _limit_files(version):
            path = os.path.join(folder, file)
            if os.path.exists(path):
                with open(path, "w") as f:
                    f.write(str(int(limit_bytes)))
        swap = os.path.join(folder, "memory.swap.max")
        if version == "v2" and os.path.exists(swap):
            with open(swap, "w") as f:
                f.write("0")
    except OSError:
        os.rmdir(folder)
        raise
    return folder


@functools.cache
def available() -> tuple[str, str] | str:
    """(version, base folder) where this process can make memory groups, or the reason it cannot
    (probed once: a group is made and removed)."""
    return first_usable(candidates(), lambda version, base, name: _make(version, base, name, 2**30), "memory")


def first_usable(places: list[tuple[str, str]], make, controller: str) -> tuple[str, str] | str:
    """The first (version, base folder) of ``places`` where ``make(version, base, name)`` makes a
    group (removed again at once), or why none would: each place's refusal, in words."""
    reasons = []
    for version, base in places:
        try:
            folder = make(version, base, f"{PREFIX}{controller}-probe-{os.getpid()}")
        except OSError as exc:
            reasons.append(f"cgroup {version} at {base}: {exc.strerror or exc}")
            continue
        os.rmdir(folder)
        return version, base
    return "; ".join(reasons) or f"no {controller} cgroup hierarchy is mounted"


def create(name: str, limit_bytes: int) -> str | None:
    """A fresh group ``PREFIX + name`` limited to ``limit_bytes``; the path of its cgroup.procs
    file (the jail writes its pid there), or None where groups cannot be made."""
    folder = folder_of(name)
    if folder is not None and os.path.isdir(folder):   # left by a launcher that failed to start
        remove(name)
    return make_group(available(), name, lambda version, base, group: _make(version, base, group, limit_bytes))


def folder_of(name: str) -> str | None:
    return group_folder(available(), name)


def peak_bytes(name: str) -> int | None:
    """The most memory group ``name`` has held at once (bytes), where the kernel reports it."""
    return read_peak(folder_of(name), ("memory.max_usage_in_bytes", "memory.peak"))


def group_folder(where: tuple[str, str] | str, name: str) -> str | None:
    """The folder of group ``PREFIX + name`` under ``where`` (an ``available()`` answer), or None
    where groups cannot be made."""
    return None if isinstance(where, str) else os.path.join(where[1], PREFIX + name)


def make_group(where: tuple[str, str] | str, name: str, make) -> str | None:
    """The cgroup.procs path of the group ``make(version, base, PREFIX + name)`` makes under
    ``where`` (an ``available()`` answer), or None where groups cannot be made or it refused."""
    if isinstance(where, str):
        return None
    version, base = where
    try:
        folder = make(version, base, PREFIX + name)
    except OSError:
        return None
    return os.path.join(folder, "cgroup.procs")


def read_peak(folder: str | None, files: tuple[str, ...]) -> int | None:
    """The first number in the first of ``files`` in ``folder`` the kernel provides, else None."""
    for file in files:
        try:
            with open(os.path.join(folder, file)) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, TypeError, IndexError):
            continue
    return None


def remove(name: str) -> None:
    """Delete group ``name`` once its last process is gone (killing what is still in it)."""
    folder = folder_of(name)
    if folder is not None:
        remove_folder(folder)


def remove_folder(folder: str) -> None:
    """Delete the group at ``folder`` once its last process is gone (killing what is still in it)."""
    if not os.path.isdir(folder):
        return
    deadline = time.monotonic() + REMOVE_WAIT_S
    while True:
        try:
            os.rmdir(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
        try:
            with open(os.path.join(folder, "cgroup.procs")) as f:
                pids = [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        time.sleep(0.005)
