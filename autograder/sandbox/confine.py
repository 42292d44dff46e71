"""Defence in depth for the sandboxed child: a seccomp denylist and a Landlock ruleset, by hand.

Standard library only (ctypes): the jail (autograder/sandbox/jail.py) loads this file by path,
before it builds the private root, and calls ``install_seccomp`` (always) and ``landlock``
(plain mode, where no private root hides the grader) as the last steps before student code runs.

**seccomp.** A classic BPF program loaded with ``prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)``
(no_new_privs is already set). It refuses with EPERM what graded code never needs and what
kernel exploits and sandbox escapes use (the classes of isolate's and Docker's lists):

- sockets other than Unix, netlink and TCP (no UDP, raw, packet, vsock, Bluetooth, AF_ALG ...);
- ptrace and process_vm_readv/writev; keyctl, add_key, request_key; bpf; io_uring_setup,
  io_uring_enter, io_uring_register; userfaultfd; perf_event_open; kexec_load, kexec_file_load;
  the mount family (mount, umount2, pivot_root, the new mount API); unshare, setns, and clone
  with a namespace flag; module loading; open_by_handle_at; swapon/swapoff, reboot;
- every system call of another ABI (i386 through int 0x80, x32 on x86_64).

clone3 answers ENOSYS (its flags sit in memory a filter cannot read): the C library then falls
back to clone, whose flags the filter checks. Architectures: x86_64 and aarch64; elsewhere
``seccomp_table`` is None and the jail says so.

**Landlock** (Linux 5.13 and later, ABI probed): the file system as a list of what may be read
(and executed) and what may be written; everything else is refused, whatever its permissions.
From ABI 4 on, TCP bind and connect are refused too (no rule allows a port); from ABI 6 on,
abstract Unix sockets and signals cannot reach a process outside the child's domain.
"""
from __future__ import annotations

import ctypes
import errno
import os
import struct

_libc = ctypes.CDLL(None, use_errno=True)

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_ABS_W, _JEQ, _JGE, _JSET, _AND, _RET = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06
#: seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8 i (the low 32 bits first: little endian)
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24

AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_STREAM, SOCK_TYPE_MASK = 1, 0xF
#: clone flags that make a namespace: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
X32_BIT = 0x40000000

#: What the filter refuses, by class: the names of the system calls of each class.
DENIED = {
    "ptrace": ("ptrace", "process_vm_readv", "process_vm_writev"),
    "keys": ("keyctl", "add_key", "request_key"),
    "bpf": ("bpf",),
    "io_uring": ("io_uring_setup", "io_uring_enter", "io_uring_register"),
    "userfaultfd": ("userfaultfd",),
    "perf": ("perf_event_open",),
    "kexec": ("kexec_load", "kexec_file_load"),
    "mount": ("mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig",
              "fsmount", "fspick", "mount_setattr"),
    "namespaces": ("unshare", "setns"),
    "modules": ("init_module", "finit_module", "delete_module"),
    "host": ("open_by_handle_at", "swapon", "swapoff", "reboot"),
}
#: (audit arch, {name: number}) per machine. Numbers from the kernel's syscall tables
#: (arch/x86/entry/syscalls/syscall_64.tbl; include/uapi/asm-generic/unistd.h for aarch64).
_COMMON = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
           "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
           "clone3": 435, "mount_setattr": 442}
TABLES = {
    "x86_64": (0xC000003E, {
        **_COMMON, "socket": 41, "clone": 56, "ptrace": 101, "process_vm_readv": 310,
        "process_vm_writev": 311, "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321,
        "userfaultfd": 323, "perf_event_open": 298, "kexec_load": 246, "kexec_file_load": 320,
        "mount": 165, "umount2": 166, "pivot_root": 155, "unshare": 272, "setns": 308,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "open_by_handle_at": 304,
        "swapon": 167, "swapoff": 168, "reboot": 169}),
    "aarch64": (0xC00000B7, {
        **_COMMON, "socket": 198, "clone": 220, "ptrace": 117, "process_vm_readv": 270,
        "process_vm_writev": 271, "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280,
        "userfaultfd": 282, "perf_event_open": 241, "kexec_load": 104, "kexec_file_load": 294,
        "mount": 40, "umount2": 39, "pivot_root": 41, "unshare": 97, "setns": 268,
        "init_module": 105, "finit_module": 273, "delete_module": 106, "open_by_handle_at": 265,
        "swapon": 224, "swapoff": 225, "reboot": 142}),
}


class ConfineError(Exception):
    """A step of the confinement failed; the message names it."""


def seccomp_table() -> tuple[int, dict] | None:
    """(audit arch, syscall numbers) of this machine, or None where no table is known."""
    return TABLES.get(os.uname().machine)


def _assemble(code: list) -> bytes:
    """Classic BPF from ``code``: ``("label", name)``, ``("ld", offset)``, ``("and", k)``,
    ``("ret", k)`` and ``(jump, k, then, else)`` where then/else are labels or None (next)."""
    places, count = {}, 0
    for op in code:
        if op[0] == "label":
            places[op[1]] = count
        else:
            count += 1
    out, at = [], 0
    for op in code:
        kind = op[0]
        if kind == "label":
            continue
        if kind == "ld":
            out.append(struct.pack("<HBBI", _LD_ABS_W, 0, 0, op[1]))
        elif kind == "and":
            out.append(struct.pack("<HBBI", _AND, 0, 0, op[1]))
        elif kind == "ret":
            out.append(struct.pack("<HBBI", _RET, 0, 0, op[1]))
        else:
            jumps = [0 if label is None else places[label] - at - 1 for label in op[2:4]]
            if not all(0 <= j < 256 for j in jumps):
                raise ConfineError(f"seccomp: jump out of range in {op}")
            out.append(struct.pack("<HBBI", {"jeq": _JEQ, "jge": _JGE, "jset": _JSET}[kind], *jumps, op[1]))
        at += 1
    return b"".join(out)


def seccomp_program(arch: int, numbers: dict) -> bytes:
    """The filter (see the module docstring) for one architecture's syscall ``numbers``."""
    deny = RET_ERRNO | errno.EPERM
    code: list = [("ld", _ARCH), ("jeq", arch, None, "deny"), ("ld", _NR)]
    if arch == TABLES["x86_64"][0]:
        code.append(("jge", X32_BIT, "deny", None))
    code += [("jeq", numbers["socket"], "socket", None), ("jeq", numbers["clone"], "clone", None),
             ("jeq", numbers["clone3"], "nosys", None)]
    for names in DENIED.values():
        for name in names:
            code.append(("jeq", numbers[name], "deny", None))
    code += [("ret", RET_ALLOW),
             ("label", "socket"), ("ld", _ARG0),
             ("jeq", AF_UNIX, "allow", None), ("jeq", AF_NETLINK, "allow", None),
             ("jeq", AF_INET, "inet", None), ("jeq", AF_INET6, "inet", "deny"),
             ("label", "inet"), ("ld", _ARG1), ("and", SOCK_TYPE_MASK),
             ("jeq", SOCK_STREAM, "allow", "deny"),
             ("label", "clone"), ("ld", _ARG0), ("jset", CLONE_NAMESPACES, "deny", "allow"),
             ("label", "allow"), ("ret", RET_ALLOW),
             ("label", "nosys"), ("ret", RET_ERRNO | errno.ENOSYS),
             ("label", "deny"), ("ret", deny)]
    return _assemble(code)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_seccomp() -> None:
    """Load the filter into this process (inherited by every thread and child it makes later)."""
    table = seccomp_table()
    if table is None:
        raise ConfineError(f"seccomp: no system call table for {os.uname().machine}")
    program = seccomp_program(*table)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    if _libc.prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(SECCOMP_MODE_FILTER),
                   ctypes.byref(fprog), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        raise ConfineError(f"seccomp: {os.strerror(ctypes.get_errno())}")


# --------------------------------------------------------------------------- Landlock

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446   # the same on every architecture
CREATE_RULESET_VERSION, RULE_PATH_BENEATH = 1, 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REFER, FS_TRUNCATE = 1 << 13, 1 << 14
#: The rights that apply to a regular file (a rule on a file may hold no other).
FS_FILE = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (``landlock_missing`` says why)."""
    return max(0, _ask_version())


def _ask_version() -> int:
    return int(_libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                             ctypes.c_uint32(CREATE_RULESET_VERSION)))


def landlock_missing() -> str:
    """Why this process cannot use Landlock, in words ('' when it can)."""
    if _ask_version() > 0:
        return ""
    err = ctypes.get_errno()
    return {errno.ENOSYS: "this kernel has no Landlock (5.13 and later)",
            errno.EOPNOTSUPP: "Landlock is switched off at boot (lsm=)",
            errno.EPERM: "landlock_create_ruleset is refused (a seccomp profile)"}.get(
        err, f"landlock_create_ruleset: {os.strerror(err)}")


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1                          # ABI 1: execute ... make_sym
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    return rights


def landlock(read: list[str], write: list[str], listable=()) -> int:
    """Restrict this process (and what it starts) to reading and executing under ``read``,
    everything under ``write``, and listing the folders under ``listable`` (no file read there);
    paths that do not exist are skipped. Returns the ABI used (0: the kernel has no Landlock,
    nothing was done). No new privileges must already be set."""
    abi = landlock_abi()
    if abi <= 0:
        return 0
    fs = _handled_fs(abi)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("<QQQ", fs, net, scoped)[:8 if abi < 4 else 16 if abi < 6 else 24]
    fd = _libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if fd < 0:
        raise ConfineError(f"landlock: create ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for paths, rights in ((listable, FS_READ_DIR), (read, FS_EXECUTE | FS_READ_FILE | FS_READ_DIR),
                              (write, fs)):
            for path in paths:
                _allow(fd, path, rights & fs)
        if _libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise ConfineError(f"landlock: restrict self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)
    return abi


def _allow(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= FS_FILE
            if not rights:
                return
        rule = struct.pack("<QI", rights, fd)            # landlock_path_beneath_attr (packed)
        if _libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                         rule, ctypes.c_uint32(0)) != 0:
            raise ConfineError(f"landlock: rule for {path}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)
