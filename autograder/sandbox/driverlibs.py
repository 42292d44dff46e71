"""The NVIDIA driver's libraries as a machine with the simulated GPU's card has them: libcuda
(the driver API) and libnvidia-ml (NVML), each answering for one card with the name, memory and
compute capability torch.cuda reports, so that a program cannot tell the simulated GPU by loading
the driver with ctypes, asking the loader's cache for it, or finding it absent from its own
memory map once CUDA is in use (shared/simgpu/driver.py maps libcuda into a process whose device
starts, as the CUDA runtime does).

``build(profile)`` compiles both with the machine's C compiler into a folder of this user's
cache (once per card: the folder's name is a digest of the sources) and returns the folder:
``lib/``, the libraries under the names a driver installs (``libcuda.so.<driver>``, ``.so.1``
and ``.so`` links), and ``ld.so.cache``, this machine's loader cache with them added as if they sat in the
system's library folder (``LIB_FOLDER``), which the jail shows in their place
(autograder/sandbox/rootfs.py, ``present_libs``). Where no compiler or ``ldconfig`` is found, or a
step fails, ``build`` returns None: the child then finds no driver library, as before.

Only what a program asks to find a card, and what memory it holds, is answered: initialising,
counting devices, a device's name, memory, the attributes torch.cuda.get_device_properties
reports (the same values), the primary context the CUDA runtime makes current on each thread
that uses the device, the driver's version, the error strings; and, read live from what each
process on the simulated device writes (shared/simgpu/driver.py, ``hold``), the memory in use
and free (NVML, cuMemGetInfo: what torch.cuda.mem_get_info reads) and the processes holding it
(NVML's compute processes). Nothing depends on the secret seed.
"""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from autograder.sandbox.rootfs import DRIVER, LIB_FOLDER
from autograder.sandbox.smi import IDLE_BYTES, TEMPERATURE_C, UUID
from shared.simgpu.driver import MEMORY_FOLDER
from shared.simgpu.profile import config, constants, public
from shared.simgpu.properties import _CudaDeviceProperties

#: The libraries: soname -> the file's base name before ``.so``.
LIBS = {"libcuda.so.1": "libcuda", "libnvidia-ml.so.1": "libnvidia-ml"}
#: The built folder's layout (part of its name's digest: a folder of another layout is not reused).
LAYOUT = "lib/ and ld.so.cache"
#: Seconds a compiler or ldconfig may take.
STEP_TIMEOUT_S = 60

#: What both libraries read of what each process on the device writes (shared/simgpu/driver.py:
#: MEMORY_FOLDER/<pid>, the bytes it holds and its device's L2 size): ``held`` fills up to ``max``
#: (pid, bytes) pairs of processes still running and returns how many there are; ``in_use`` is
#: their sum, or the idle card's ``%(idle)d`` bytes when none holds any (as nvidia-smi's "1MiB"
#: on an idle card); ``own_l2`` the calling process's L2 size, else the card's.
_HELD = r"""
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
static int held(unsigned int *pids, unsigned long long *bytes, int max) {
  DIR *d = opendir("%(folder)s"); struct dirent *e; int n = 0; char path[64]; struct stat st;
  if (!d) return 0;
  while ((e = readdir(d)) != NULL) {
    char *end; unsigned long pid = strtoul(e->d_name, &end, 10); unsigned long long b = 0; FILE *f;
    if (*end || !pid || pid > 4194304) continue;
    snprintf(path, sizeof path, "/proc/%%lu", pid);
    if (stat(path, &st) != 0) continue;
    snprintf(path, sizeof path, "%(folder)s/%%lu", pid);
    if ((f = fopen(path, "r")) == NULL) continue;
    if (fscanf(f, "%%llu", &b) != 1) b = 0;
    fclose(f);
    if (!b) continue;
    if (n < max) { pids[n] = (unsigned int)pid; bytes[n] = b; }
    n++; }
  closedir(d); return n; }
static int own_l2(int card) {     /* the L2 of this process's device, drawn per submission */
  char path[64]; unsigned long long b = 0, l2 = 0; FILE *f;
  snprintf(path, sizeof path, "%(folder)s/%%d", (int)getpid());
  if ((f = fopen(path, "r")) == NULL) return card;
  if (fscanf(f, "%%llu %%llu", &b, &l2) != 2 || !l2 || l2 > 2147483647ULL) l2 = (unsigned long long)card;
  fclose(f); return (int)l2; }
static unsigned long long in_use(void) {
  unsigned int pids[64]; unsigned long long bytes[64], sum = 0; int i, n = held(pids, bytes, 64);
  for (i = 0; i < n && i < 64; i++) sum += bytes[i];
  return n ? sum : %(idle)dULL; }
"""

_CUDA = _HELD + r"""
#include <string.h>
#include <stddef.h>
static int ready;
static const char NAME[] = %(name)s;
int cuInit(unsigned int flags) { (void)flags; ready = 1; return 0; }
int cuDriverGetVersion(int *v) { if (!v) return 1; *v = %(cuda_version)d; return 0; }
int cuDeviceGetCount(int *n) { if (!ready) return 3; if (!n) return 1; *n = 1; return 0; }
int cuDeviceGet(int *d, int i) { if (!ready) return 3; if (!d) return 1; if (i != 0) return 101; *d = 0; return 0; }
int cuDeviceGetName(char *s, int len, int d) {
  if (!ready) return 3; if (d != 0) return 101; if (!s || len <= 0) return 1;
  strncpy(s, NAME, (size_t)len - 1); s[len - 1] = 0; return 0; }
int cuDeviceTotalMem_v2(size_t *b, int d) {
  if (!ready) return 3; if (d != 0) return 101; if (!b) return 1; *b = %(memory)dULL; return 0; }
int cuDeviceTotalMem(size_t *b, int d) { return cuDeviceTotalMem_v2(b, d); }
int cuDeviceGetAttribute(int *v, int attribute, int d) {
  if (!ready) return 3; if (d != 0) return 101; if (!v) return 1;
  switch (attribute) {
    case 1: *v = 1024; return 0;
    case 10: *v = 32; return 0;
    case 13: *v = %(clock_khz)d; return 0;
    case 16: *v = %(sms)d; return 0;
    case 18: *v = %(integrated)d; return 0;
    case 33: *v = %(pci_bus)d; return 0;
    case 36: *v = %(memory_clock_khz)d; return 0;
    case 37: *v = %(bus_width)d; return 0;
    case 38: *v = own_l2(%(l2)d); return 0;
    case 39: *v = %(threads_per_sm)d; return 0;
    case 75: *v = %(major)d; return 0;
    case 76: *v = %(minor)d; return 0;
    default: *v = 0; return 0; } }
int cuDeviceComputeCapability(int *major, int *minor, int d) {
  if (!ready) return 3; if (d != 0) return 101; if (!major || !minor) return 1;
  *major = %(major)d; *minor = %(minor)d; return 0; }
static int primary;
static __thread void *current;
int cuDevicePrimaryCtxRetain(void **ctx, int d) {
  if (!ready) return 3; if (d != 0) return 101; if (!ctx) return 1; primary++; *ctx = &primary; return 0; }
int cuDevicePrimaryCtxRelease(int d) { if (!ready) return 3; if (d != 0) return 101; if (primary) primary--; return 0; }
int cuDevicePrimaryCtxRelease_v2(int d) { return cuDevicePrimaryCtxRelease(d); }
int cuCtxSetCurrent(void *ctx) {
  if (!ready) return 3; if (ctx && ctx != &primary) return 201; current = ctx; return 0; }
int cuCtxGetCurrent(void **ctx) { if (!ready) return 3; if (!ctx) return 1; *ctx = current; return 0; }
int cuCtxGetDevice(int *d) { if (!ready) return 3; if (!current) return 201; if (!d) return 1; *d = 0; return 0; }
int cuMemGetInfo_v2(size_t *free, size_t *total) {
  unsigned long long used = in_use();
  if (!ready) return 3; if (!current) return 201; if (!free || !total) return 1;
  *total = %(memory)dULL; *free = used < *total ? *total - used : 0; return 0; }
int cuMemGetInfo(size_t *free, size_t *total) { return cuMemGetInfo_v2(free, total); }
int cuGetErrorString(int e, const char **s) {
  if (!s) return 1; *s = e == 0 ? "no error" : e == 3 ? "initialization error" :
  e == 101 ? "invalid device ordinal" : e == 201 ? "invalid device context" : "invalid argument"; return 0; }
int cuGetErrorName(int e, const char **s) {
  if (!s) return 1; *s = e == 0 ? "CUDA_SUCCESS" : e == 3 ? "CUDA_ERROR_NOT_INITIALIZED" :
  e == 101 ? "CUDA_ERROR_INVALID_DEVICE" : e == 201 ? "CUDA_ERROR_INVALID_CONTEXT" :
  "CUDA_ERROR_INVALID_VALUE"; return 0; }
"""

_NVML = _HELD + r"""
#include <string.h>
static int ready;
static const char NAME[] = %(name)s;
static const char UUID[] = %(uuid)s;
static const char DRIVER[] = %(driver)s;
typedef struct { unsigned long long total, free, used; } memory_t;
static int put(char *s, unsigned int len, const char *what) {
  if (!ready) return 1; if (!s) return 2; if (len <= strlen(what)) return 7;
  strcpy(s, what); return 0; }
int nvmlInit_v2(void) { ready = 1; return 0; }
int nvmlInit(void) { return nvmlInit_v2(); }
int nvmlInitWithFlags(unsigned int flags) { (void)flags; return nvmlInit_v2(); }
int nvmlShutdown(void) { if (!ready) return 1; ready = 0; return 0; }
int nvmlDeviceGetCount_v2(unsigned int *n) { if (!ready) return 1; if (!n) return 2; *n = 1; return 0; }
int nvmlDeviceGetCount(unsigned int *n) { return nvmlDeviceGetCount_v2(n); }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h) {
  if (!ready) return 1; if (!h || i != 0) return 2; *h = (void *)&ready; return 0; }
int nvmlDeviceGetHandleByIndex(unsigned int i, void **h) { return nvmlDeviceGetHandleByIndex_v2(i, h); }
int nvmlDeviceGetName(void *h, char *s, unsigned int len) { (void)h; return put(s, len, NAME); }
int nvmlDeviceGetUUID(void *h, char *s, unsigned int len) { (void)h; return put(s, len, UUID); }
int nvmlSystemGetDriverVersion(char *s, unsigned int len) { return put(s, len, DRIVER); }
int nvmlSystemGetCudaDriverVersion(int *v) { if (!ready) return 1; if (!v) return 2; *v = %(cuda_version)d; return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } memory_v2_t;
typedef struct { unsigned int pid; unsigned long long used; } process_v1_t;
typedef struct { unsigned int pid; unsigned long long used; unsigned int gpu_instance, compute_instance; } process_t;
int nvmlDeviceGetMemoryInfo(void *h, memory_t *m) {
  (void)h; if (!ready) return 1; if (!m) return 2;
  m->total = %(memory)dULL; m->used = in_use(); m->free = m->total - m->used; return 0; }
int nvmlDeviceGetMemoryInfo_v2(void *h, memory_v2_t *m) {
  (void)h; if (!ready) return 1; if (!m) return 2;
  m->total = %(memory)dULL; m->reserved = 0; m->used = in_use(); m->free = m->total - m->used; return 0; }
static int processes(unsigned int *count, void *out, int wide) {
  unsigned int pids[64]; unsigned long long bytes[64]; int i, n;
  if (!ready) return 1; if (!count) return 2;
  n = held(pids, bytes, 64); if (n > 64) n = 64;
  if (*count < (unsigned int)n) { *count = (unsigned int)n; return 7; }
  if (n && !out) return 2;
  for (i = 0; i < n; i++) {
    if (wide) { process_t *p = (process_t *)out + i; p->pid = pids[i]; p->used = bytes[i];
                p->gpu_instance = p->compute_instance = 0xFFFFFFFFu; }
    else { process_v1_t *p = (process_v1_t *)out + i; p->pid = pids[i]; p->used = bytes[i]; } }
  *count = (unsigned int)n; return 0; }
int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *c, void *p) { (void)h; return processes(c, p, 1); }
int nvmlDeviceGetComputeRunningProcesses_v2(void *h, unsigned int *c, void *p) { (void)h; return processes(c, p, 1); }
int nvmlDeviceGetComputeRunningProcesses(void *h, unsigned int *c, void *p) { (void)h; return processes(c, p, 0); }
int nvmlDeviceGetGraphicsRunningProcesses_v3(void *h, unsigned int *c, void *p) {
  (void)h; (void)p; if (!ready) return 1; if (!c) return 2; *c = 0; return 0; }
int nvmlDeviceGetCudaComputeCapability(void *h, int *major, int *minor) {
  (void)h; if (!ready) return 1; if (!major || !minor) return 2; *major = %(major)d; *minor = %(minor)d; return 0; }
int nvmlDeviceGetTemperature(void *h, int sensor, unsigned int *t) {
  (void)h; if (!ready) return 1; if (!t || sensor != 0) return 2; *t = %(temperature)d; return 0; }
const char *nvmlErrorString(int e) {
  return e == 0 ? "Success" : e == 1 ? "Uninitialized" : e == 7 ? "Insufficient Size" : "Invalid Argument"; }
"""


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sources(profile: str) -> dict[str, str]:
    """soname -> the C source of that library for ``profile``'s card (a simgpu profile key)."""
    cfg = config(profile)
    props = _CudaDeviceProperties(public(cfg))
    facts = {"clock_khz": props.clock_rate, "integrated": int(props.is_integrated), "pci_bus": props.pci_bus_id,
             "memory_clock_khz": props.memory_clock_rate, "bus_width": props.memory_bus_width,
             "threads_per_sm": props.max_threads_per_multi_processor, "name": _c_string(props.name),
             "memory": props.total_memory, "sms": props.multi_processor_count, "major": props.major,
             "minor": props.minor, "l2": props.L2_cache_size,
             "cuda_version": int(constants()["software"]["driver_api_version"]), "uuid": _c_string(UUID),
             "driver": _c_string(DRIVER), "idle": IDLE_BYTES, "temperature": TEMPERATURE_C,
             "folder": MEMORY_FOLDER}
    return {"libcuda.so.1": _CUDA % facts, "libnvidia-ml.so.1": _NVML % facts}


def _cache_home() -> Path | None:
    """This user's cache folder for the built libraries (under ~/.cache); None where the user has
    no absolute home folder."""
    base = os.path.expanduser("~/.cache")
    return Path(base) / "why17" / "driverlibs" if os.path.isabs(base) else None


@functools.lru_cache(maxsize=16)
def build(profile: str) -> str | None:
    """The folder holding ``profile``'s driver libraries and loader cache (see the module's
    docstring), built on first use; None where they cannot be built here."""
    texts = sources(profile)
    digest = hashlib.sha256("\0".join([LAYOUT, LIB_FOLDER, *texts.values(), _host_cache_stamp()]).encode())
    home = _cache_home()
    if home is None:
        return None
    folder = home / digest.hexdigest()[:16]
    if (folder / "ld.so.cache").is_file() and (folder / "lib").is_dir():
        return str(folder)
    compiler, ldconfig = shutil.which("gcc") or shutil.which("cc"), _ldconfig()
    if compiler is None or ldconfig is None:
        return None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder.parent) as work:
            built = Path(work) / "built"
            staged = built / "lib"
            staged.mkdir(parents=True)
            for soname, text in texts.items():
                _compile(compiler, Path(work), staged, soname, text)
            _loader_cache(ldconfig, staged, Path(work), built / "ld.so.cache")
            if not folder.exists():
                os.rename(built, folder)
    except (OSError, subprocess.SubprocessError):
        return None
    return str(folder) if (folder / "ld.so.cache").is_file() else None


def _compile(compiler: str, work: Path, staged: Path, soname: str, text: str) -> None:
    """``soname`` built from ``text`` into ``staged`` as a driver installs it: the versioned file,
    the soname and the development name linked to it."""
    base = LIBS[soname]
    source = work / f"{base}.c"
    source.write_text(text, encoding="utf-8")
    real = f"{base}.so.{DRIVER}"
    subprocess.run([compiler, "-shared", "-fPIC", "-O1", f"-Wl,-soname,{soname}", "-o", str(staged / real),
                    str(source)], check=True, capture_output=True, timeout=STEP_TIMEOUT_S)
    os.symlink(real, staged / soname)
    os.symlink(soname, staged / f"{base}.so")


def _ldconfig() -> str | None:
    for path in ("/sbin/ldconfig", "/usr/sbin/ldconfig"):
        if os.access(path, os.X_OK):
            return path
    return shutil.which("ldconfig")


def _host_cache_stamp() -> str:
    """What changes when the machine's loader cache does (its size and time)."""
    try:
        st = os.stat("/etc/ld.so.cache")
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


def _loader_cache(ldconfig: str, staged: Path, work: Path, target: Path) -> None:
    """``target``, a loader cache: the machine's libraries (its ld.so.conf) and the staged ones, each
    staged one recorded at its place in LIB_FOLDER. ldconfig records the folder it scanned, so
    it scans a folder whose path has LIB_FOLDER's length, and that path is then replaced in the
    cache's strings by LIB_FOLDER (the cache holds no sums or lengths that would change)."""
    alias = Path(tempfile.mkdtemp(prefix="l", dir="/tmp"))
    try:
        stand_in = str(alias) + "/" + "d" * (len(LIB_FOLDER) - len(str(alias)) - 1)
        if len(stand_in) != len(LIB_FOLDER) or len(str(alias)) >= len(LIB_FOLDER) - 1:
            raise OSError("no stand-in folder of the library folder's length")
        os.symlink(staged, stand_in)
        conf = work / "ld.so.conf"
        conf.write_text(("include /etc/ld.so.conf\n" if os.path.exists("/etc/ld.so.conf") else "")
                        + stand_in + "\n", encoding="utf-8")
        out = work / "ld.so.cache"
        subprocess.run([ldconfig, "-X", "-C", str(out), "-f", str(conf)], check=True, capture_output=True,
                       timeout=STEP_TIMEOUT_S)
        data = out.read_bytes()
        if stand_in.encode() not in data:
            raise OSError("ldconfig did not record the driver libraries")
        target.write_bytes(data.replace(stand_in.encode(), LIB_FOLDER.encode()))
    finally:
        shutil.rmtree(alias, ignore_errors=True)
