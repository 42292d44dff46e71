"""What this machine lets the jail do, found once per grader process by a probe through the real jail.

``protection()`` starts a probe (a child run through autograder/sandbox/jail.py, first with
namespaces unless the SANDBOX setting is ``plain``) and asks it what it sees: its uid, which of the
grader's files it can read, whether a route out exists, whether the seccomp filter refused a UDP
socket, its working folder's size and inode count, its cgroup. The answer is a ``Protection``:
the mode (``namespaces`` or ``plain``), each bound that holds, each that does not with its reason,
and ``describe()``, the line the results carry.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder.core import settings
from autograder.sandbox import cgroup, pidsgroup, policy
from autograder.sandbox.policy import JailLimits

#: Mode override for operators and tests: 'auto' (default), 'namespaces' (fail when refused), 'plain'.
MODE_ENV = settings.SANDBOX.name
#: The probe's pids cgroup bound, and the threads it tries to start: starting fewer, under an
#: RLIMIT_NPROC far above both, proves the group's bound is in force where the child runs.
PROBE_TASKS, PROBE_THREADS = 24, 48
#: RLIMIT_NPROC the probe runs under (far above PROBE_THREADS: only a pids cgroup stops it), and
#: the one it then sets itself (below PROBE_TASKS: only RLIMIT_NPROC stops it) to learn whether
#: the kernel enforces RLIMIT_NPROC where the child runs (its uid, its user namespace).
PROBE_NPROC, PROBE_NPROC_LOW = 4096, 12


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
    pids_cgroup: str = ""          # cgroup version bounding the child's processes+threads ('' none)
    nproc_enforced: bool = True    # the kernel kept the probe to its RLIMIT_NPROC
    why_not: tuple = ()            # (bound, reason) for each bound that does not hold here

    def _tasks_bound(self) -> str:
        """What enforces the processes+threads bound, in words (the one in force, as probed)."""
        if self.pids_cgroup:
            return f"(pids cgroup {self.pids_cgroup})"
        if not self.nproc_enforced:
            return "NOT bounded (no pids cgroup, and RLIMIT_NPROC was not enforced where the probe ran)"
        if self.grader_root:
            return "(RLIMIT_NPROC of a uid of its own)"
        if self.mode == "namespaces":
            return "(RLIMIT_NPROC in a user namespace of its own)"
        return ("more than the grader's user ran at its start (RLIMIT_NPROC counts that user's"
                " processes, so what the user starts meanwhile counts against it too)")

    def describe(self, limits: JailLimits | None = None) -> str:
        """One paragraph for the results' output: what protected the grading of this submission."""
        limits = limits or JailLimits()
        who = ("an unprivileged uid of its own" if self.grader_root
               else "the grader's own (unprivileged) user")
        parts = [f"student code ran as {who}"]
        if self.mode == "namespaces":
            parts.append("in its own pid, mount, network, IPC, UTS and cgroup namespaces with every capability"
                         " dropped")
        else:
            parts.append(f"WITHOUT namespaces ({self.reason or 'not available'})")
        parts.append("with no network" if not self.network else "WITH network access (not isolated)")
        if self.secrets_readable:
            parts.append("and COULD read grader files: " + ", ".join(self.secrets_readable))
        else:
            parts.append("unable to read the grader, its hidden tests or the reference solutions")
        caps = (f"{limits.address_space_bytes // 2**20} MiB address space, "
                f"{limits.processes} processes+threads {self._tasks_bound()}, {limits.open_files} open files, "
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


def mode_wanted() -> str:
    """The SANDBOX setting: 'auto', 'namespaces' or 'plain'."""
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
import resource, threading
def started(n):    # threads started (and ended again) out of n
    hold, made = threading.Event(), []
    for _ in range(n):
        try:
            made.append(threading.Thread(target=hold.wait, daemon=True)); made[-1].start()
        except RuntimeError:
            made.pop()
            break
    hold.set()
    for t in made:
        t.join()
    return len(made)
threads = started(int(sys.argv[2]))            # under the pids cgroup's bound (if any)
low = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_NPROC, (low, low))
threads_nproc = started(int(sys.argv[2]))      # under a low RLIMIT_NPROC
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
                  "cgroup": groups, "threads": threads,
                  "threads_nproc": threads_nproc}))
"""


def _probe(namespaces: bool) -> tuple[dict | None, str]:
    workdir = Path(tempfile.mkdtemp(prefix="grader-probe-"))
    name = policy.group_name(workdir)
    procs = cgroup.create(name, JailLimits().memory_bytes)
    tasks = pidsgroup.create(name, PROBE_TASKS)
    try:
        spec = policy.build(workdir, (), JailLimits(), processes=PROBE_NPROC, namespaces=namespaces,
                            cgroups=[g for g in (procs, tasks) if g])
        argv = [sys.executable, "-I", "-S", "-B", str(policy.JAIL), json.dumps(spec), "--",
                sys.executable, "-I", "-S", "-c", _PROBE, json.dumps(policy.secret_paths()), str(PROBE_THREADS),
                str(PROBE_NPROC_LOW)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=workdir)
        # Its memory was charged to the group: the proof it ran there (in its own cgroup namespace
        # the probe sees its group as '/').
        peak = cgroup.peak_bytes(policy.group_name(workdir)) if procs else None
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    finally:
        try:
            os.rmdir(str(workdir) + ".root")
        except OSError:
            pass
        if procs:
            cgroup.remove(name)
        if tasks:
            pidsgroup.remove(name)
        shutil.rmtree(workdir, ignore_errors=True)
    if done.returncode != 0:
        lines = (done.stderr.strip() or f"exit status {done.returncode}").splitlines()
        return None, lines[-1].removeprefix("sandbox: could not start the sandboxed process: ")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "group_peak_bytes": peak or 0}, ""


@functools.cache
def protection() -> Protection:
    """Probe once per process which protection this machine gives (see the module docstring)."""
    wanted = mode_wanted()
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
    in_group = not isinstance(group, str) and (cgroup.PREFIX in seen["cgroup"] or seen.get("group_peak_bytes", 0) > 0)
    quota = seen["workdir_bytes"] == limits.disk_bytes and seen["workdir_inodes"] == limits.disk_inodes
    abi = confine.landlock_abi() if mode == "plain" else 0
    why_not = []
    if not in_group:
        why_not.append(("total memory cap", group if isinstance(group, str) else "the probe was not in its group"))
    tasks = pidsgroup.available()
    tasks_bound = not isinstance(tasks, str) and 0 < seen.get("threads", PROBE_THREADS) < PROBE_THREADS
    if not tasks_bound:
        why_not.append(("pids cgroup", tasks if isinstance(tasks, str) else
                        f"the probe started {seen.get('threads')} threads past a bound of {PROBE_TASKS}"))
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
                      memory_cgroup=group[0] if in_group else "", pids_cgroup=tasks[0] if tasks_bound else "",
                      nproc_enforced=seen.get("threads_nproc", 0) < PROBE_NPROC_LOW,
                      why_not=tuple(why_not))
