"""The private root of a jailed child: what its mount namespace shows, and nothing else.

In the child's own mount namespace (autograder/sandbox/jail.py, namespaces mode): a tmpfs root
holding a fresh /proc, a /dev with a few device nodes (and the GPU's, when the policy names
them; else the files a GPU machine shows, ``present_gpu``: the simulated GPU is not told apart
by their absence), size- and inode-limited tmpfs /tmp and /dev/shm, the system, Python, the venv and the
project's ``shared/`` bound read-only (the policy's ``view``), the working folder read-write (or,
with ``workdir_quota``, a tmpfs of its own holding a copy of it), the policy's ``hide`` paths
covered; then the root is made read-only and the process chroots into it.

Standard library only: the jail loads this file by path (``jail.sibling``) before it builds the
root that does not show it. A step that fails raises RootError naming the step and the path.
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME = 1 << 18, 1 << 21
MNT_DETACH = 2
#: statvfs flag -> the mount flag a bind remount must repeat (the kernel refuses to clear locked ones)
_LOCKED = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
           (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
           (os.ST_RELATIME, MS_RELATIME))
#: device nodes the child may open
DEVICES = ("null", "zero", "full", "random", "urandom")
#: Where the root shows no real GPU, what a machine with an NVIDIA GPU shows anyway, so that a
#: program cannot tell the simulated GPU by their absence: its device nodes (each /dev/null: open
#: one and it reads nothing) and the driver's version file (a 570 driver, the first that runs the
#: CUDA 12.8 the simulated GPU reports as torch.version.cuda).
GPU_NODES = ("nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools")
DRIVER = "570.133.20"
#: Where a GPU machine keeps the driver's tool, nvidia-smi (``present_smi``), and its libraries
#: (``present_libs``: NVIDIA's container toolkit mounts them into the system's library folder).
SMI_FOLDER = "/usr/bin"
LIB_FOLDER = "/usr/lib/x86_64-linux-gnu"
DRIVER_VERSION = (f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {DRIVER}  Fri Mar 14 16:58:03 UTC 2025\n"
                  "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n")

#: What the loaded driver adds to /proc's kernel-wide lists (``present_proc``): its modules, its
#: character devices (major 195 and two of the dynamic ones, in the kernel's major order), an
#: interrupt line.
GPU_MODULES = ("nvidia_uvm 1966080 0 - Live 0x0000000000000000 (PO)",
               "nvidia_modeset 1421312 0 - Live 0x0000000000000000 (PO)",
               "nvidia 104103936 2 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (PO)")
GPU_CHAR_DEVICES = ((195, "nvidia"), (195, "nvidia-modeset"), (195, "nvidiactl"), (508, "nvidia-uvm"),
                    (509, "nvidia-caps"))

_libc = ctypes.CDLL(None, use_errno=True)


class RootError(Exception):
    """A step of building the private root failed; the message names the step and the path."""


def mount(source, target, fstype, flags: int, data=None) -> None:
    def enc(s):
        return None if s is None else os.fsencode(s)

    if _libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        raise RootError(f"mount {target}: {os.strerror(ctypes.get_errno())}")


def _mount_flags(path: str) -> int:
    flags = os.statvfs(path).f_flag
    return sum(ms for st, ms in _LOCKED if flags & st)


def _make_point(target: str, like_dir: bool) -> None:
    if like_dir:
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            with open(target, "w"):
                pass


def bind(root: str, path: str, *, writable: bool = False) -> None:
    """Show ``path`` at the same place under ``root``, read-only unless ``writable``."""
    if os.path.islink(path):          # e.g. /lib -> usr/lib on merged-/usr systems
        target = root + path
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.lexists(target):
            os.symlink(os.readlink(path), target)
        return
    real = os.path.realpath(path)
    target = root + real
    _make_point(target, os.path.isdir(real))
    mount(real, target, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | _mount_flags(target) | (0 if writable else MS_RDONLY)
    mount(None, target, None, flags)
    if not writable:
        # A remount changes one mount, not the ones below it (/sys/fs/cgroup/* on cgroup v1):
        # each submount the recursive bind brought is made read-only too.
        for point in submounts(target):
            mount(None, point, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_RDONLY | _mount_flags(point))


def submounts(target: str) -> list[str]:
    """The mount points strictly below ``target``, from /proc/self/mountinfo, outermost first."""
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4]
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), point)   # \040 is a space
            if point.startswith(target.rstrip("/") + "/"):
                points.append(point)
    return sorted(dict.fromkeys(points), key=lambda p: p.count("/"))


def hide(root: str, path: str) -> None:
    """Cover ``path`` (if the view shows it) with an empty read-only tmpfs or /dev/null."""
    target = root + path
    if not os.path.lexists(target) or os.path.islink(target):
        return
    if os.path.isdir(target):
        mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=000")
    else:
        mount("/dev/null", target, None, MS_BIND)


def build_root(policy: dict) -> None:
    """In the new mount namespace: the private root at policy['jail_root'], then chroot into it."""
    root = policy["jail_root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=16m")
    os.makedirs(root + "/proc", exist_ok=True)
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    dev = root + "/dev"
    os.makedirs(dev, exist_ok=True)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k")
    for name in DEVICES + tuple(policy.get("devices", ())):
        if os.path.exists(f"/dev/{name}"):
            bind(root, f"/dev/{name}", writable=True)
    if not policy.get("devices"):
        present_gpu(root, policy.get("gpu_information"))
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")
    os.makedirs(dev + "/shm", exist_ok=True)
    tmp = f"mode=1777,size={policy['tmp_bytes']},nr_inodes={policy.get('tmp_inodes', 4096)}"
    mount("tmpfs", dev + "/shm", "tmpfs", MS_NOSUID | MS_NODEV, tmp)
    os.makedirs(root + "/tmp", exist_ok=True)
    mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, tmp)
    for path in policy["view"]:
        if os.path.lexists(path):
            bind(root, path)
    if policy.get("workdir_quota"):
        quota_workdir(root, policy["workdir"], policy["workdir_quota"])
    else:
        bind(root, policy["workdir"], writable=True)
    if policy.get("smi"):
        present_smi(root, policy["smi"])
    if policy.get("driver_libs"):
        present_libs(root, policy["driver_libs"])
    if policy.get("pci"):
        present_pci(root, policy["pci"])
    for path in policy.get("hide", ()):
        hide(root, path)
    seed_fonts(root, policy.get("font_lists", ()), policy.get("uid"))
    os.chmod(root, 0o755)
    mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=755")
    os.chroot(root)
    os.chdir(policy["workdir"])


#: The child's matplotlib folder (its MPLCONFIGDIR in namespaces mode: autograder/sandbox/policy.py).
MPL_DIR = "/tmp/matplotlib"


def seed_fonts(root: str, lists, uid: int | None) -> None:
    """Copy the grader's matplotlib font ``lists`` (host paths: policy.font_lists) into the
    child's ``MPL_DIR`` under ``root``, each listing only the fonts the private root shows (so it
    names no file of the grader's the child cannot read), owned by ``uid`` (None: ours). A child
    that imports matplotlib then reads the list instead of scanning every font and running
    fc-list: 0.3 CPU s per child (docs/performance.md). A list that cannot be read is skipped."""
    target = root + MPL_DIR
    for src in lists:
        try:
            with open(src, encoding="utf-8") as fh:
                data = json.load(fh)
            for key in ("ttflist", "afmlist"):   # relative names are matplotlib's own fonts (the venv)
                data[key] = [f for f in data[key] if not str(f["fname"]).startswith("/")
                             or os.path.isfile(root + f["fname"])]
        except (OSError, ValueError, TypeError, KeyError):
            continue
        os.makedirs(target, mode=0o700, exist_ok=True)
        dst = os.path.join(target, os.path.basename(src))
        with open(dst, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        if uid is not None:
            os.chown(dst, uid, -1)
    if uid is not None and os.path.isdir(target):
        os.chown(target, uid, -1)


def present_gpu(root: str, information: dict | None = None) -> None:
    """The files a GPU machine shows (``GPU_NODES``, /proc/driver/nvidia/version) under ``root``,
    whose /dev and /proc are already mounted: nodes bound to /dev/null, the driver's folder a
    small read-only tmpfs over /proc/driver; with ``information`` ({"address", "text"}: the
    simulated card's), its gpus/<address>/information file too."""
    for name in GPU_NODES:
        target = f"{root}/dev/{name}"
        _make_point(target, False)
        mount("/dev/null", target, None, MS_BIND)
    driver = root + "/proc/driver"
    os.makedirs(driver, exist_ok=True)
    mount("tmpfs", driver, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=555,size=16k")
    os.makedirs(driver + "/nvidia", mode=0o555)
    with open(driver + "/nvidia/version", "w", encoding="ascii") as fh:
        fh.write(DRIVER_VERSION)
    if information:
        folder = f"{driver}/nvidia/gpus/{information['address']}"
        os.makedirs(folder, mode=0o555)
        with open(folder + "/information", "w", encoding="utf-8") as fh:
            fh.write(information["text"])
    mount(None, driver, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    present_proc(root)


def present_proc(root: str) -> None:
    """/proc/modules, /proc/devices and /proc/interrupts under ``root`` as the kernel writes them
    with the NVIDIA driver loaded: each a read-only copy of this kernel's, with the driver's lines
    added, bound over the file (where the kernel refuses, the file stays as it is)."""
    with _scratch(root, ".proc", "256k") as layer:
        for name, add in (("modules", _with_modules), ("devices", _with_devices), ("interrupts", _with_irq)):
            try:           # a kernel without loadable modules has no /proc/modules to show
                with open(f"{root}/proc/{name}", encoding="utf-8", errors="replace") as fh:
                    text = add(fh.read())
                with open(f"{layer}/{name}", "w", encoding="utf-8") as fh:
                    fh.write(text)
                mount(f"{layer}/{name}", f"{root}/proc/{name}", None, MS_BIND)
                mount(None, f"{root}/proc/{name}", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
            except (OSError, RootError, ValueError, IndexError):
                continue


@contextlib.contextmanager
def _scratch(root: str, name: str, size: str):
    """A small tmpfs at ``root``/``name`` for files the root then shows elsewhere (bound, or an
    overlay's layer); afterwards let go and its mount point removed, so the root does not show it
    (what was bound or overlaid from it stays)."""
    layer = f"{root}/{name}"
    os.makedirs(layer)
    mount("tmpfs", layer, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=755,size={size}")
    try:
        yield layer
    finally:
        if _libc.umount2(os.fsencode(layer), ctypes.c_int(MNT_DETACH)) == 0:
            os.rmdir(layer)


def _with_modules(text: str) -> str:
    return "".join(line + "\n" for line in GPU_MODULES) + text


def _with_devices(text: str) -> str:
    head, _, rest = text.partition("\n\n")
    lines = head.splitlines()
    entries = [(int(line.split()[0]), line) for line in lines[1:] if line.split()[:1] and line.split()[0].isdigit()]
    entries += [(major, f"{major:3d} {name}") for major, name in GPU_CHAR_DEVICES]
    entries.sort(key=lambda e: e[0])
    return "\n".join([lines[0] if lines else "Character devices:", *(line for _m, line in entries)]) + "\n\n" + rest


def _with_irq(text: str) -> str:
    """The driver's interrupt line after the numbered ones (the named ones, NMI and on, follow)."""
    lines = text.splitlines()
    counts = "".join(f" {0:10d}" for _ in lines[0].split())
    at = 1 + sum(1 for line in lines[1:] if line.split(":")[0].strip().isdigit())
    return "\n".join([*lines[:at], f" 120:{counts}  IR-PCI-MSI 1572864-edge      nvidia", *lines[at:]]) + "\n"


def present_smi(root: str, text: str) -> None:
    """nvidia-smi (``text``, autograder/sandbox/smi.py) in /usr/bin under ``root``, where a GPU
    machine has it: the view's /usr/bin overlaid, read-only, with a one-file layer on a tmpfs that
    is then let go. Where the kernel refuses the overlay (a user namespace before Linux 5.11) or
    a path would not fit its options, nothing is added: the child finds no nvidia-smi, as before."""
    folder = root + os.path.realpath(SMI_FOLDER)
    if not os.path.isdir(folder) or any(c in folder for c in ",:\\="):
        return
    with _scratch(root, ".smi", "64k") as layer:
        with open(layer + "/nvidia-smi", "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(layer + "/nvidia-smi", 0o755)
        with contextlib.suppress(RootError):
            mount("overlay", folder, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, f"lowerdir={layer}:{folder}")


def present_libs(root: str, folder: str) -> None:
    """The driver's libraries built in ``folder`` (autograder/sandbox/driverlibs.py: ``lib/`` and
    ``ld.so.cache``) in the system's library folder under ``root``, and its loader cache over
    /etc/ld.so.cache: the library folder overlaid, read-only, with ``lib/`` as its upper layer,
    the cache bound read-only. Where the kernel refuses either, or a path would not fit the
    overlay's options, that part is left out."""
    lib, layer = root + os.path.realpath(LIB_FOLDER), folder + "/lib"
    if os.path.isdir(lib) and os.path.isdir(layer) and not any(c in lib + layer for c in ",:\\="):
        with contextlib.suppress(RootError):
            mount("overlay", lib, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, f"lowerdir={layer}:{lib}")
    cache = root + os.path.realpath("/etc/ld.so.cache")
    if os.path.isfile(cache):
        with contextlib.suppress(RootError):
            mount(f"{folder}/ld.so.cache", cache, None, MS_BIND)
            mount(None, cache, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def present_pci(root: str, card: dict) -> None:
    """The card's PCI function under ``root`` as sysfs shows a GPU its driver has bound: a folder
    in /sys/devices (on a root bus of its own, ``pci<domain>:<bus>``) holding its vendor, device
    and class files (autograder/sandbox/smi.py's ``pci``) and a ``driver`` link to
    /sys/bus/pci/drivers/nvidia, which links back to it, and a link to it in /sys/bus/pci/devices
    beside the host's. Each of the three folders is the host's overlaid, read-only, with one
    layer of these files. Where the host has a function at ``card["address"]``, a path would not
    fit an overlay's options, or the kernel refuses the first overlay, nothing is added; a later
    one refused leaves that folder the host's."""
    address, pci = card["address"], "/sys/bus/pci"
    bus = "pci" + address.rsplit(":", 1)[0]                       # 0000:18:00.0 -> pci0000:18
    folders = {"devices": "/sys/devices", "drivers": pci + "/drivers", "functions": pci + "/devices"}
    if (os.path.lexists(f"{pci}/devices/{address}") or not all(os.path.isdir(root + f) for f in folders.values())
            or any(c in root for c in ",:\\=")):
        return
    function = f"/sys/devices/{bus}/{address}"
    with _scratch(root, ".pci", "64k") as layer:
        own = f"{layer}/devices/{bus}/{address}"
        os.makedirs(own, mode=0o755)
        for key in ("vendor", "device", "class", "subsystem_vendor"):
            with open(f"{own}/{key}", "w", encoding="ascii") as fh:
                fh.write(card[key] + "\n")
        os.symlink(os.path.relpath(pci + "/drivers/nvidia", function), own + "/driver")
        os.makedirs(f"{layer}/drivers/nvidia", mode=0o755)
        os.symlink(os.path.relpath(function, pci + "/drivers/nvidia"), f"{layer}/drivers/nvidia/{address}")
        os.makedirs(f"{layer}/functions", mode=0o755)
        os.symlink(os.path.relpath(function, pci + "/devices"), f"{layer}/functions/{address}")
        for name, folder in folders.items():
            try:
                mount("overlay", root + folder, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                      f"lowerdir={layer}/{name}:{root}{folder}")
            except RootError:
                if name == "devices":
                    return                  # no function to point at: the host's folders as they are


def quota_workdir(root: str, workdir: str, quota: dict) -> None:
    """The working folder at the same place under ``root``: a tmpfs of ``quota['bytes']`` bytes
    and ``quota['inodes']`` inodes holding a copy of ``workdir``'s files (its folders and links
    too), so whatever the child writes lands there and nowhere on the host's disk."""
    if not os.path.isdir(workdir) or os.path.islink(workdir):
        raise RootError(f"the working folder {workdir} is not a folder")
    target = root + workdir
    os.makedirs(target, exist_ok=True)
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV,
          f"mode=755,size={int(quota['bytes'])},nr_inodes={int(quota['inodes'])}")
    for top, dirs, files in os.walk(workdir):
        here = target + top[len(workdir):]
        for name in dirs:
            src = os.path.join(top, name)
            if os.path.islink(src):
                os.symlink(os.readlink(src), os.path.join(here, name))
            else:
                os.mkdir(os.path.join(here, name), 0o755)
        for name in files:
            src, dst = os.path.join(top, name), os.path.join(here, name)
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
                continue
            with open(src, "rb") as fin, open(dst, "wb") as fout:
                while chunk := fin.read(1 << 20):
                    fout.write(chunk)
            os.chmod(dst, os.stat(src).st_mode & 0o777)
