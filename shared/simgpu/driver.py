"""What the CUDA runtime leaves in a process once it uses a GPU: the driver's library mapped
(libcuda.so.1, where this machine has one: the grading jail presents one for the simulated card,
autograder/sandbox/driverlibs.py) with the device's primary context current on each thread that
uses the device and the driver's device files held open, and the runtime's event-handler
thread (``cuda-EvtHandlr``, waiting). A program that lists its own memory map, descriptors or
threads after timing sees them as on a GPU machine. Once per process; a forked child, as
CUDA's, starts with neither thread nor device.

The thread is a native one (``_thread``), not a ``threading.Thread``: the CUDA runtime's threads
are not Python's, so ``threading.enumerate()`` does not list it; it waits off the CPU in poll(2),
as the runtime's does, on a pipe no one writes to.
"""
from __future__ import annotations

import _thread
import ctypes
import errno
import os

#: The name the CUDA runtime gives its event-handler thread (at most 15 bytes, as the kernel keeps).
THREAD_NAME = b"cuda-EvtHandlr"
#: The device files a CUDA process holds open once it uses a GPU: the driver's control node, the
#: card's and unified memory's (in the grading jail, autograder/sandbox/rootfs.py ``GPU_NODES``).
DEVICE_FILES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm")
#: prctl's option that names the calling thread; poll's event "data to read".
PR_SET_NAME, POLLIN = 15, 1

_started = False
_kept: list = []
#: The driver's library where loaded, and the primary context it gave (as the CUDA runtime
#: retains it on first use and makes it current on each thread that uses the device).
_driver: list = []
_context = ctypes.c_void_p()
#: Where each process on the simulated device writes the device memory it holds and its L2 size,
#: in bytes, in a file named by its pid: what the driver's libraries and nvidia-smi the grading jail presents
#: read (autograder/sandbox/driverlibs.py, smi.py), as a GPU's driver knows what each process
#: holds. Written only where the driver's library is mapped (a machine that has none has no reader).
MEMORY_FOLDER = "/dev/shm/.nvidia-mem"
#: Width of the file's one line, in bytes (rewritten in place: the numbers padded with spaces).
_WIDTH = 48
_held: list = []                # this process's file in MEMORY_FOLDER (None: it cannot have one)


def make_current() -> None:
    """Make the primary context current on the calling thread, as the CUDA runtime does on a
    thread's first use of the device (shared/simgpu/dispatch.py calls it then): a thread that
    never used the device has none."""
    if _driver and _context.value:
        _driver[0].cuCtxSetCurrent(_context)


def hold(n_bytes: int, l2_bytes: int) -> None:
    """This process now holds ``n_bytes`` of device memory (its context's and its allocations')
    on a device with an L2 of ``l2_bytes`` (the attribute the driver reports): written to its
    file in MEMORY_FOLDER (one line: the two numbers) where the driver's library is mapped, else
    nothing. The file is opened for each write, never held: a program listing its descriptors
    finds the driver's device files, as a CUDA process's, and nothing else."""
    if not _driver or _held == [None]:
        return
    line = f"{int(n_bytes)} {int(l2_bytes)}".encode().ljust(_WIDTH - 1) + b"\n"
    try:
        if not _held:
            os.makedirs(MEMORY_FOLDER, exist_ok=True)
            _held.append(f"{MEMORY_FOLDER}/{os.getpid()}")
        fd = os.open(_held[0], os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        _held[:] = [None]       # no shared memory folder to write in: the readers see an idle card
        return
    try:
        os.pwrite(fd, line, 0)
    except OSError:
        pass
    finally:
        os.close(fd)


def start() -> None:
    """Map the driver's library (where found; then hold its device files open, as a CUDA process
    does) and start the event-handler thread, once."""
    global _started
    if _started:
        return
    _started = True
    try:
        _driver.append(ctypes.CDLL("libcuda.so.1"))
    except OSError:
        pass                    # no driver library on this machine: none is mapped, as before
    else:
        _driver[0].cuInit(0)
        _driver[0].cuDevicePrimaryCtxRetain(ctypes.byref(_context), 0)
        for path in DEVICE_FILES:
            try:
                _kept.append(os.open(path, os.O_RDWR | os.O_CLOEXEC))
            except OSError:
                pass            # a machine without the node: nothing held, as before
    make_current()
    never = _thread.allocate_lock()
    never.acquire()
    _kept.append(never)
    try:
        _thread.start_new_thread(_handler, (never,))
    except RuntimeError:
        pass                    # no thread left under the process's limits: the device runs without it


class _PollFd(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_int), ("events", ctypes.c_short), ("revents", ctypes.c_short)]


def _handler(never) -> None:
    """Name the thread, then wait as the CUDA runtime's does: in poll(2) on a descriptor of its
    own (a pipe no one writes to), with no time-out. Where libc's poll cannot be had or stops
    waiting (a program closed the pipe: poll returns at once), on a lock: never on the CPU."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_NAME, ctypes.c_char_p(THREAD_NAME), 0, 0, 0)
        read_end, write_end = os.pipe2(os.O_CLOEXEC)
        _kept.append(write_end)                 # kept open: the read end never hangs up
        wanted = _PollFd(read_end, POLLIN, 0)
        while libc.poll(ctypes.byref(wanted), 1, -1) < 0 and ctypes.get_errno() == errno.EINTR:
            pass
    except (OSError, AttributeError):
        pass
    never.acquire()


def _after_fork_in_child() -> None:
    global _started
    _started = False
    _driver.clear()             # a forked child has no context, as CUDA's; it maps the library anew
    _held.clear()               # nor any device memory: the parent's file stays the parent's
    _context.value = None


os.register_at_fork(after_in_child=_after_fork_in_child)
