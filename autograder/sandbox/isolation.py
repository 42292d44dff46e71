"""The hardened sandbox, grader side: what this machine allows, and the command that applies it.

``wrap(argv, ...)`` turns the command that starts the child (autograder/runtime/runner.py) into one that runs
it through autograder/sandbox/jail.py. What the jail can do depends on the machine, so
``protection()`` finds out once per grader process by starting a probe through the real jail and
asking it what it sees (its uid, whether the grader's files and the network are reachable):

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

In both, when the grader runs as root the child gets a uid of its own (``UID_BASE`` + the
launcher's pid, unique among live children), so the per-uid process limit (RLIMIT_NPROC) counts
that child's processes and threads only: a fork bomb fails fast without starving a neighbour.
``describe()`` is the line the results carry: what protection was in force, as measured.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.core import settings
from autograder.sandbox import cgroup

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
#: Paths of the system every Python program needs (read-only in the child's view).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
#: Device nodes passed through when present (the GPU: NVIDIA's driver nodes).
GPU_DEVICES = ("nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidia4", "nvidia5", "nvidia6",
               "nvidia7", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")
#: The kernel's flag (in /proc/PID/stat) of a process that is already on its way out.
PF_EXITING = 0x4
#: Mode override for operators and tests: 'auto' (default), 'namespaces' (fail when refused), 'plain'.
MODE_ENV = settings.SANDBOX.name


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

    @classmethod
    def from_sandbox(cls, limits) -> "JailLimits":
        """From autograder.sandbox.parent.Limits (memory_limit_mb, file_size_bytes, cpu_seconds):
        the total memory is the per-process address space (the course's memory_limit_mb)."""
        return cls(address_space_bytes=int(limits.memory_limit_mb) * 2**20,
                   processes=64 + 4 * (os.cpu_count() or 1),
                   file_size_bytes=int(limits.file_size_bytes),
                   cpu_seconds=int(limits.cpu_seconds),
                   memory_bytes=int(limits.memory_limit_mb) * 2**20)

    def rlimits(self, processes: int) -> dict:
        return {"as": self.address_space_bytes, "nproc": processes, "nofile": self.open_files,
                "fsize": self.file_size_bytes, "cpu": self.cpu_seconds, "core": 0}


@dataclass(frozen=True)
class Protection:
    """What the probe found: the mode, and what sandboxed code could see and do."""

    mode: str                      # 'namespaces' or 'plain'
    grader_root: bool              # the grader runs as root
    child_uid: int | None          # a uid inside the sandbox (None: the probe did not run)
    secrets_readable: tuple[str, ...]
    network: bool                  # a route out exists
    reason: str = ""               # why namespaces were not used
    seccomp: bool = False          # the probe's UDP socket was refused by the filter
    landlock: int = 0              # Landlock ABI of the plain-mode ruleset (0: none)
    quota: bool = False            # the working folder was a size- and inode-limited tmpfs
    memory_cgroup: str = ""        # cgroup version bounding the child's memory in total ('' none)
    why_not: tuple = ()            # (bound, reason) for each bound that does not hold here

    def describe(self, limits: JailLimits | None = None) -> str:
        """One paragraph for the results' output: what protected the grading of this submission."""
        limits = limits or JailLimits()
        who = ("an unprivileged uid of its own" if self.grader_root
               else "the grader's own (unprivileged) user")
        parts = [f"student code ran as {who}"]
        if self.mode == "namespaces":
            parts.append("in its own pid, mount, network, IPC and UTS namespaces with every capability"
                         " dropped")
        else:
            parts.append(f"WITHOUT namespaces ({self.reason or 'not available'})")
        parts.append("with no network" if not self.network else "WITH network access (not isolated)")
        if self.secrets_readable:
            parts.append("and COULD read grader files: " + ", ".join(self.secrets_readable))
        else:
            parts.append("unable to read the grader, its hidden tests or the reference solutions")
        caps = (f"{limits.address_space_bytes // 2**20} MiB address space, "
                f"{limits.processes} processes+threads, {limits.open_files} open files, "
                f"{limits.file_size_bytes // 2**20} MiB per file, {limits.cpu_seconds} CPU s")
        if self.memory_cgroup:
            caps += f", {limits.memory_bytes // 2**20} MiB of memory in all (cgroup {self.memory_cgroup})"
        if self.quota:
            caps += (f", a working folder of {limits.disk_bytes // 2**20} MiB and {limits.disk_inodes} files"
                     f" (tmpfs)")
        extra = []
        if self.seccomp:
            extra.append("a seccomp filter refused UDP/raw/packet sockets, ptrace, keys, bpf, io_uring,"
                         " userfaultfd, perf, kexec, mount and namespaces")
        if self.landlock:
            extra.append(f"Landlock (ABI {self.landlock}) kept it to the files it needs")
        held = {"total memory cap": f": what holds is {limits.address_space_bytes // 2**20} MiB per process"
                                    f" x {limits.processes} processes",
                "disk quota": f": what holds is {limits.file_size_bytes // 2**20} MiB per file"}
        missing = "; ".join(f"no {bound} ({why}){held.get(bound, '')}" for bound, why in self.why_not)
        return (f"Sandbox ({self.mode}): " + ", ".join(parts) + f"; limits: {caps}"
                + ("; " + "; ".join(extra) if extra else "") + ("; " + missing if missing else "") + ".")


def secret_paths() -> list[str]:
    """Absolute paths the child must not read (the grader package, wherever it was loaded from,
    and the SECRETS of the checkout and of the course graded, which may lie elsewhere)."""
    from autograder.core import course

    roots = dict.fromkeys([ROOT, course.current_file().resolve().parent])
    paths = [str(root / name) for root in roots for name in SECRETS]
    for package in dict.fromkeys([ROOT / "autograder", Path(__file__).resolve().parents[1]]):
        paths += [str(p) for p in sorted(package.iterdir())
                  if p.name not in (RUNTIME, MARKER) and str(p) not in paths]
    return paths


def view_paths() -> list[str]:
    """Read-only paths of the child's private root: system, interpreter, venv, project shared/ and
    the child runtime (autograder/runtime/: the runner; nothing else of the grader)."""
    paths = list(SYSTEM)
    candidates = [sys.base_prefix, sys.prefix, sys.exec_prefix,
                  os.path.dirname(os.path.realpath(sys.executable)),
                  *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib"))]
    root = str(ROOT)
    for path in candidates:
        path = os.path.realpath(path)
        inside_secret = any(path == s or path.startswith(s + os.sep) for s in secret_paths())
        holds_root = root == path or root.startswith(path.rstrip(os.sep) + os.sep)
        if os.path.exists(path) and not inside_secret and not holds_root and path not in paths:
            paths.append(path)
    paths.append(str(ROOT / "shared"))
    paths.append(str(Path(__file__).resolve().parents[1] / RUNTIME))
    return paths


#: Device nodes a plain-mode child may read and write under Landlock.
PLAIN_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


def landlock_rules(workdir: str) -> dict:
    """Plain mode's Landlock ruleset: read (and execute) what the private root would show, write
    the working folder. The checkout's root may be listed (the child imports ``shared`` and
    ``autograder.runtime`` from it) but none of its files read besides those two packages and
    ``autograder/__init__.py``."""
    read = [*view_paths(), "/proc", str(ROOT / "autograder" / MARKER),
            *(d for d in PLAIN_DEVICES), *(f"/dev/{d}" for d in GPU_DEVICES if os.path.exists(f"/dev/{d}"))]
    return {"read": read, "list": [str(ROOT)], "write": [workdir, *PLAIN_DEVICES]}


def _seccomp_wanted() -> bool:
    """The seccomp filter goes in wherever this machine's system call table is known."""
    from autograder.sandbox import confine
    return confine.seccomp_table() is not None


def policy(workdir: Path, keep_fds=(), limits: JailLimits | None = None, *,
           namespaces: bool = True, processes: int | None = None, cgroup_procs: str | None = None) -> dict:
    """The jail's instructions for one child (plain data; see jail.py)."""
    limits = limits or JailLimits()
    workdir = os.path.realpath(workdir)
    env = {"HOME": workdir, "USER": "grader-sandbox", "LOGNAME": "grader-sandbox"}
    if namespaces:
        env.update(TMPDIR="/tmp", MPLCONFIGDIR="/tmp/matplotlib")
    else:
        env.update(TMPDIR=workdir, MPLCONFIGDIR=os.path.join(workdir, ".matplotlib"))
    return {
        "namespaces": namespaces,
        "workdir": workdir,
        "jail_root": workdir.rstrip("/") + ".root",
        "view": view_paths(),
        "hide": secret_paths(),
        "devices": [d for d in GPU_DEVICES if os.path.exists(f"/dev/{d}")],
        "keep_fds": [int(fd) for fd in keep_fds],
        "uid": "auto" if os.getuid() == 0 else None,
        "uid_base": UID_BASE,
        "tmp_bytes": limits.tmp_bytes,
        "tmp_inodes": limits.tmp_inodes,
        "workdir_quota": {"bytes": limits.disk_bytes, "inodes": limits.disk_inodes} if namespaces else None,
        "cgroup": cgroup_procs,
        "seccomp": _seccomp_wanted(),
        "landlock": None if namespaces else landlock_rules(workdir),
        "limits": limits.rlimits(processes or _process_cap(limits)),
        "env": env,
    }


def _process_cap(limits: JailLimits) -> int:
    """RLIMIT_NPROC for the child: its own budget when it has a uid or a user namespace of its own,
    otherwise what the grader's user already runs plus that budget (the limit is per uid)."""
    if os.getuid() == 0 or _mode_wanted() != "plain" and protection().mode == "namespaces":
        return limits.processes
    return _threads_of_uid(os.getuid()) + limits.processes


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


def wrap(argv: list[str], workdir: Path, keep_fds=(), limits: JailLimits | None = None) -> list[str]:
    """The command that runs ``argv`` in the sandbox, with ``workdir`` as its private folder."""
    prot = protection()
    limits = limits or JailLimits()
    procs = cgroup.create(group_name(workdir), limits.memory_bytes) if prot.memory_cgroup else None
    spec = policy(workdir, keep_fds, limits, namespaces=prot.mode == "namespaces", cgroup_procs=procs)
    return [sys.executable, "-I", "-S", "-B", str(JAIL), json.dumps(spec), "--", *argv]


def group_name(workdir: Path) -> str:
    """The memory cgroup of the child working in ``workdir`` (its folder's name: unique)."""
    return os.path.basename(os.path.realpath(workdir).rstrip("/"))


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


def _mode_wanted() -> str:
    return settings.SANDBOX.get()


_PROBE = """
import errno, json, os, socket, sys
secrets = json.loads(sys.argv[1])
def opens(p):
    try:
        open(p, "rb").close()
        return True
    except OSError:
        return False
def readable(p):   # a file that opens, or a folder holding one (a list of names alone is not enough)
    if not os.path.isdir(p):
        return opens(p)
    for seen, (top, dirs, files) in enumerate(os.walk(p)):
        if any(opens(os.path.join(top, f)) for f in files[:20]):
            return True
        if seen >= 50:
            break
    return False
readable = [p for p in secrets if os.path.exists(p) and readable(p)]
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close(); seccomp = False
except OSError as exc:
    seccomp = exc.errno == errno.EPERM
network = False
for family, address in ((socket.AF_INET, ("192.0.2.1", 9)), (socket.AF_INET6, ("2001:db8::1", 9))):
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
    except OSError:                             # no such family here (a kernel without IPv6)
        continue
    s.setblocking(False)
    try:
        s.connect(address); network = True      # TEST-NET / documentation prefix: nothing answers
    except BlockingIOError:
        network = True                          # a route: the connection is on its way
    except OSError:
        pass
    s.close()
fs = os.statvfs(".")
with open("/proc/self/cgroup") as f:
    groups = f.read()
print(json.dumps({"uid": os.getuid(), "readable": readable, "network": network, "seccomp": seccomp,
                  "workdir_bytes": fs.f_blocks * fs.f_frsize, "workdir_inodes": fs.f_files,
                  "cgroup": groups}))
"""


def _probe(namespaces: bool) -> tuple[dict | None, str]:
    workdir = Path(tempfile.mkdtemp(prefix="grader-probe-"))
    procs = cgroup.create(group_name(workdir), JailLimits().memory_bytes)
    try:
        spec = policy(workdir, (), JailLimits(), namespaces=namespaces, processes=4096, cgroup_procs=procs)
        argv = [sys.executable, "-I", "-S", "-B", str(JAIL), json.dumps(spec), "--",
                sys.executable, "-I", "-S", "-c", _PROBE, json.dumps(secret_paths())]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=workdir)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    finally:
        try:
            os.rmdir(str(workdir) + ".root")
        except OSError:
            pass
        if procs:
            cgroup.remove(group_name(workdir))
        shutil.rmtree(workdir, ignore_errors=True)
    if done.returncode != 0:
        lines = (done.stderr.strip() or f"exit status {done.returncode}").splitlines()
        return None, lines[-1].removeprefix("sandbox: could not start the sandboxed process: ")
    return json.loads(done.stdout.strip().splitlines()[-1]), ""


@functools.cache
def protection() -> Protection:
    """Probe once per process which protection this machine gives (see the module docstring)."""
    wanted = _mode_wanted()
    root = os.getuid() == 0
    reason = f"{MODE_ENV}=plain"
    if wanted != "plain":
        seen, reason = _probe(namespaces=True)
        if seen is not None:
            return _found("namespaces", root, seen)
        if wanted == "namespaces":
            raise RuntimeError(f"sandbox: namespaces requested ({MODE_ENV}=namespaces) but refused: {reason}")
    seen, why = _probe(namespaces=False)
    if seen is None:
        raise RuntimeError(f"sandbox: cannot start a sandboxed process at all: {why}")
    return _found("plain", root, seen, reason)


def _found(mode: str, root: bool, seen: dict, reason: str = "") -> Protection:
    """The Protection the probe's findings ``seen`` show, each missing bound with its reason."""
    from autograder.sandbox import confine

    limits = JailLimits()
    group = cgroup.available()
    in_group = not isinstance(group, str) and cgroup.PREFIX in seen["cgroup"]
    quota = seen["workdir_bytes"] == limits.disk_bytes and seen["workdir_inodes"] == limits.disk_inodes
    abi = confine.landlock_abi() if mode == "plain" else 0
    why_not = []
    if not in_group:
        why_not.append(("total memory cap", group if isinstance(group, str) else "the probe was not in its group"))
    if not quota:
        why_not.append(("disk quota", "the working folder is on the host's file system: a mount of its own"
                        " needs namespaces" if mode == "plain" else "the probe's folder was not the quota tmpfs"))
    if not seen["seccomp"]:
        why_not.append(("seccomp filter", f"no system call table for {os.uname().machine}"
                        if confine.seccomp_table() is None else "the probe's UDP socket was not refused"))
    if mode == "plain" and not abi:
        why_not.append(("Landlock", confine.landlock_missing() or "the ruleset was not applied"))
    return Protection(mode, root, seen["uid"], tuple(seen["readable"]), seen["network"], reason,
                      seccomp=bool(seen["seccomp"]), landlock=abi, quota=quota,
                      memory_cgroup=group[0] if in_group else "", why_not=tuple(why_not))


def describe(sandbox_limits) -> str:
    """The results' line for a Sandbox with ``sandbox_limits`` (autograder.sandbox.parent.Limits)."""
    return protection().describe(JailLimits.from_sandbox(sandbox_limits))
