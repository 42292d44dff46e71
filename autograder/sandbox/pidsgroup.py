"""One pids cgroup per sandboxed child: its processes and threads under one bound, in the kernel.

RLIMIT_NPROC (the jail's rlimit) counts the tasks of a uid, in the user namespace the child runs
in: it bounds a child only where that uid runs nothing else, and it counts a grader's other
processes where the child keeps the grader's uid (plain mode without root). A pids cgroup counts
every task (process or thread) that joined the group or was started inside it, whatever its uid or
namespace: ``pids.max`` is a bound the kernel keeps for every path a child runs in (a fresh
interpreter, a fork server's child, the simulated GPU's calls). Where the grader may make one,
``create`` makes a group with ``pids.max`` = the child's processes+threads plus the jail's own
tasks; the jail's launcher joins it before anything else (autograder/sandbox/jail.py).

Layouts, from /proc/self/cgroup as for the memory group (autograder/sandbox/cgroup.py):

- **v1** (a ``pids`` hierarchy): a group under the grader's own pids group;
- **v2**: the child's one group in the unified hierarchy (the memory group's folder, when the
  memory group is v2 too), where the grader's group delegates ``pids`` to its children.

Anywhere else ``available()`` says why, and the bound that holds is RLIMIT_NPROC's
(probe.Protection.describe says which).
"""
from __future__ import annotations

import functools
import os

from autograder.sandbox import cgroup

#: Where the v1 pids hierarchy is mounted.
V1_PIDS = "/sys/fs/cgroup/pids"


def _make(version: str, base: str, name: str, tasks: int) -> str:
    """Group ``name`` under ``base`` with pids.max ``tasks`` (v2: the memory group's folder when
    it is there already); its folder. OSError when refused."""
    if version == "v2":
        with open(os.path.join(base, "cgroup.subtree_control")) as f:
            if "pids" not in f.read().split():
                raise PermissionError(f"{base} does not delegate the pids controller to its children")
    folder = os.path.join(base, name)
    made = not os.path.isdir(folder)
    if made:
        os.mkdir(folder, 0o755)
    try:
        with open(os.path.join(folder, "pids.max"), "w") as f:
            f.write(str(int(tasks)))
    except OSError:
        if made:
            os.rmdir(folder)
        raise
    return folder


@functools.cache
def available() -> tuple[str, str] | str:
    """(version, base folder) where this process can make pids groups, or the reason it cannot
    (probed once: a group is made and removed)."""
    return cgroup.first_usable(cgroup.candidates("pids", V1_PIDS),
                               lambda version, base, name: _make(version, base, name, 64), "pids")


def folder_of(name: str) -> str | None:
    return cgroup.group_folder(available(), name)


def create(name: str, tasks: int) -> str | None:
    """A group ``PREFIX + name`` holding at most ``tasks`` processes and threads; the path of its
    cgroup.procs file (the jail writes its pid there), or None where groups cannot be made."""
    return cgroup.make_group(available(), name, lambda version, base, group: _make(version, base, group, tasks))


def peak(name: str) -> int | None:
    """The most tasks group ``name`` has held at once, where the kernel reports it (pids.peak)."""
    return cgroup.read_peak(folder_of(name), ("pids.peak",))


def remove(name: str) -> None:
    """Delete group ``name`` once its last task is gone (killing what is still in it)."""
    folder = folder_of(name)
    if folder is not None:
        cgroup.remove_folder(folder)
