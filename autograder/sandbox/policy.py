"""The jail's instructions for one child: what it sees, what it may not read, its limits.

``build(workdir, ...)`` is the plain-data policy autograder/sandbox/jail.py applies (see there for
each key): the private root's read-only ``view`` (system, Python, the venv, the project's
``shared/`` and the child runtime, nothing else of the grader), the ``hide`` list (the grader, its
hidden checks, the reference solutions, the tests), the GPU's device nodes, the rlimits and quotas
of ``JailLimits``, the memory and pids cgroups, the seccomp filter and, in plain mode, the Landlock ruleset
that keeps the child to what the private root would show. ``in_process``: the launcher forked
the jail from a fork server, so the jail runs the runner in its own process (the policy says so;
nothing in the jail guesses it).
"""
from __future__ import annotations

import functools
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from autograder.sandbox import driverlibs, smi

ROOT = Path(__file__).resolve().parents[2]
JAIL = Path(__file__).with_name("jail.py")
#: First uid given to sandboxed children when the grader is root (2**31 - 2**24: above the ranges
#: that distributions give to users, system accounts and subordinate-id blocks).
UID_BASE = 2**31 - 2**24
#: What the child never sees: the grader, its hidden checks, the reference solutions, the tests.
SECRETS = ("solutions", "tests", ".git", ".notes", "course.yml", "bench")
#: The one part of the grader package the child sees: the code that runs inside the sandbox.
RUNTIME = "runtime"
#: The grader package's marker (a one-line docstring): with Landlock (plain mode) the child reads
#: it to import ``autograder.runtime``; with namespaces the private root does not show it.
MARKER = "__init__.py"
#: Where the host's cgroup hierarchies are mounted: covered in the child's view, which would
#: otherwise list every other child's memory group and what it holds.
CGROUP_VIEWS = ("/sys/fs/cgroup",)
#: Paths of the system every Python program needs (read-only in the child's view).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
#: Device nodes passed through when present (the GPU: NVIDIA's driver nodes).
GPU_DEVICES = ("nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidia4", "nvidia5", "nvidia6",
               "nvidia7", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")
#: Device nodes a plain-mode child may read and write under Landlock.
PLAIN_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


@dataclass(frozen=True)
class JailLimits:
    """Per-child caps the jail sets (soft = hard). Bytes, counts and CPU seconds as named."""

    address_space_bytes: int = 4096 * 2**20
    processes: int = 64            # processes AND threads of the child's uid (torch's pools count)
    open_files: int = 512
    file_size_bytes: int = 64 * 2**20
    cpu_seconds: int = 1200
    tmp_bytes: int = 128 * 2**20   # private /tmp and /dev/shm (memory-backed), each
    tmp_inodes: int = 4096         # files and folders in each of /tmp and /dev/shm
    disk_bytes: int = 256 * 2**20  # the working folder's quota (a tmpfs of its own, namespaces mode)
    disk_inodes: int = 4096        # files and folders the working folder may hold
    memory_bytes: int = 4096 * 2**20   # all the child's processes together (memory cgroup)
    hide: tuple[str, ...] = ()     # more paths it may not read: the graded course's (course_secrets)
    sim_profile: str = ""          # the simulated card whose nvidia-smi a machine without a GPU shows

    @classmethod
    def from_sandbox(cls, limits) -> "JailLimits":
        """From autograder.sandbox.launch.Limits (memory_limit_mb, file_size_bytes, cpu_seconds):
        the total memory is the per-process address space (the course's memory_limit_mb)."""
        return cls(address_space_bytes=int(limits.memory_limit_mb) * 2**20,
                   processes=64 + 4 * (os.cpu_count() or 1),
                   file_size_bytes=int(limits.file_size_bytes),
                   cpu_seconds=int(limits.cpu_seconds),
                   memory_bytes=int(limits.memory_limit_mb) * 2**20,
                   hide=tuple(limits.hide), sim_profile=limits.sim_profile)

    def rlimits(self, processes: int) -> dict:
        return {"as": self.address_space_bytes, "nproc": processes, "nofile": self.open_files,
                "fsize": self.file_size_bytes, "cpu": self.cpu_seconds, "core": 0}


def course_secrets(course_root: Path) -> tuple[str, ...]:
    """The SECRETS of a course folder (which may lie outside the checkout): what a grading of that
    course passes down as ``Limits.hide``."""
    return tuple(str(Path(course_root).resolve() / name) for name in SECRETS)


def secret_paths(hide=()) -> list[str]:
    """Absolute paths the child must not read: the grader package, wherever it was loaded from,
    the SECRETS of the checkout, and ``hide`` (the graded course's: ``course_secrets``)."""
    paths = [str(ROOT / name) for name in SECRETS]
    paths += [path for path in hide if path not in paths]
    for package in dict.fromkeys([ROOT / "autograder", Path(__file__).resolve().parents[1]]):
        paths += [str(p) for p in sorted(package.iterdir())
                  if p.name not in (RUNTIME, MARKER) and str(p) not in paths]
    return paths


def view_paths(hide=()) -> list[str]:
    """Read-only paths of the child's private root: system, interpreter, venv, project shared/ and
    the child runtime (autograder/runtime/: the runner, and the package's docstring-only
    __init__.py; nothing else of the grader)."""
    paths = list(SYSTEM)
    root = str(ROOT)
    secrets = secret_paths(hide)    # once: it lists the grader package's folders
    for path in _interpreter_paths():
        inside_secret = any(path == s or path.startswith(s + os.sep) for s in secrets)
        holds_root = root == path or root.startswith(path.rstrip(os.sep) + os.sep)
        if os.path.exists(path) and not inside_secret and not holds_root and path not in paths:
            paths.append(path)
    paths.append(str(ROOT / "shared"))
    package = Path(__file__).resolve().parents[1]
    # autograder/__init__.py (a docstring) too: without it ``autograder`` is a namespace package in
    # the child, whose ``__file__`` is None, and inspect.getmodule (which torch.library, and so
    # FlopCounterMode, calls) fails on it for every program
    paths.append(str(package / MARKER))
    paths.append(str(package / RUNTIME))
    return paths


@functools.lru_cache(maxsize=1)
def _interpreter_paths() -> tuple[str, ...]:
    """The interpreter's and the venv's folders (prefixes, the executable's folder, the standard
    library's and site-packages'), each resolved: fixed for the life of this process, so worked
    out once, not for every child (sysconfig's paths cost about a millisecond a child;
    docs/performance.md)."""
    candidates = [sys.base_prefix, sys.prefix, sys.exec_prefix,
                  os.path.dirname(os.path.realpath(sys.executable)),
                  *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib"))]
    return tuple(os.path.realpath(path) for path in candidates)


def landlock_rules(workdir: str, hide=()) -> dict:
    """Plain mode's Landlock ruleset: read (and execute) what the private root would show, write
    the working folder. The checkout's root may be listed (the child imports ``shared`` and
    ``autograder.runtime`` from it) but none of its files read besides those two packages and
    ``autograder/__init__.py``."""
    read = [*view_paths(hide), "/proc", str(ROOT / "autograder" / MARKER),
            *(d for d in PLAIN_DEVICES), *(f"/dev/{d}" for d in GPU_DEVICES if os.path.exists(f"/dev/{d}"))]
    return {"read": read, "list": [str(ROOT)], "write": [workdir, *PLAIN_DEVICES]}


def _seccomp_wanted() -> bool:
    """The seccomp filter goes in wherever this machine's system call table is known."""
    from autograder.sandbox import confine
    return confine.seccomp_table() is not None


def build(workdir: Path, keep_fds=(), limits: JailLimits | None = None, *, processes: int,
          namespaces: bool = True, cgroups=(), in_process: bool = False) -> dict:
    """The jail's instructions for one child (plain data; see jail.py). ``processes``: its
    RLIMIT_NPROC; ``cgroups``: the cgroup.procs files of its memory and pids cgroups (none: none);
    ``in_process``: it was forked from a fork server (the jail then runs the runner in-process)."""
    limits = limits or JailLimits()
    workdir = os.path.realpath(workdir)
    devices = [d for d in GPU_DEVICES if os.path.exists(f"/dev/{d}")]
    shown = smi.script(limits.sim_profile) if namespaces and limits.sim_profile and not devices else None
    env = {"HOME": workdir, "USER": "grader-sandbox", "LOGNAME": "grader-sandbox",
           **(smi.CONTAINER_ENV if shown else {})}
    if namespaces:
        env.update(TMPDIR="/tmp", MPLCONFIGDIR="/tmp/matplotlib")
    else:
        env.update(TMPDIR=workdir, MPLCONFIGDIR=os.path.join(workdir, ".matplotlib"))
    return {
        "namespaces": namespaces,
        "workdir": workdir,
        "jail_root": workdir.rstrip("/") + ".root",
        "view": view_paths(limits.hide),
        "hide": [*secret_paths(limits.hide), *CGROUP_VIEWS],
        "devices": devices,
        "smi": shown,
        "driver_libs": driverlibs.build(limits.sim_profile) if shown else None,
        "pci": smi.pci(limits.sim_profile) if shown else None,
        "gpu_information": ({"address": smi.BUS_ID[4:], "text": smi.information(limits.sim_profile)}
                            if shown else None),
        "keep_fds": [int(fd) for fd in keep_fds],
        "uid": "auto" if os.getuid() == 0 else None,
        "uid_base": UID_BASE,
        "tmp_bytes": limits.tmp_bytes,
        "tmp_inodes": limits.tmp_inodes,
        "workdir_quota": {"bytes": limits.disk_bytes, "inodes": limits.disk_inodes} if namespaces else None,
        "cgroups": list(dict.fromkeys(cgroups)),
        "seccomp": _seccomp_wanted(),
        "landlock": None if namespaces else landlock_rules(workdir, limits.hide),
        "limits": limits.rlimits(processes),
        "env": env,
        "in_process": in_process,
        "font_lists": font_lists() if namespaces else [],
    }


def font_lists() -> list[str]:
    """The grader's matplotlib font lists (``fontlist-v*.json`` in the folder where matplotlib
    keeps its cache here: MPLCONFIGDIR, else $XDG_CACHE_HOME or ~/.cache, then matplotlib), which
    the jail copies into a child's own matplotlib folder (rootfs.seed_fonts); none when there are none yet."""
    base = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "matplotlib")
    try:
        names = os.listdir(base)
    except OSError:
        return []
    return sorted(os.path.join(base, n) for n in names if n.startswith("fontlist-v") and n.endswith(".json"))


def group_name(workdir: Path) -> str:
    """The memory cgroup of the child working in ``workdir`` (its folder's name: unique)."""
    return os.path.basename(os.path.realpath(workdir).rstrip("/"))

