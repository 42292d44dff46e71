"""A jailed child on a machine without a GPU sees the files a GPU machine shows
(autograder/sandbox/rootfs.py, ``present_gpu`` and ``present_smi``): a program cannot tell the
simulated GPU by their absence, nor by nvidia-smi naming another card than torch does. Real
processes through the jail, as tests/sandbox/test_security_jail.py runs them."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from autograder.sandbox import driverlibs, rootfs, smi
from autograder.sandbox.policy import JailLimits
from shared.simgpu import cudalib
from shared.simgpu.profile import config, gpu_keys, public
from tests.helpers.jailed import needs_namespaces, seen

no_gpu = pytest.mark.skipif(os.path.exists("/dev/nvidia0"),
                            reason="a real GPU's nodes are bound as they are; nothing is presented")


@needs_namespaces
@no_gpu
def test_a_jailed_child_sees_the_driver_version_and_the_device_nodes_read_only():
    info = seen("""
        import json, os
        path = "/proc/driver/nvidia/version"
        try:
            open(path + ".new", "w")
            wrote = True
        except OSError:
            wrote = False
        nodes = sorted(n for n in os.listdir("/dev") if n.startswith("nvidia"))
        read = open("/dev/nvidia0", "rb").read().decode()
        print(json.dumps({"version": open(path).read(), "nodes": nodes, "read": read, "wrote": wrote}))
    """)
    assert info["version"] == rootfs.DRIVER_VERSION
    assert info["nodes"] == sorted(rootfs.GPU_NODES)
    assert info["read"] == "" and info["wrote"] is False


SMI_SEEN = """
    import json, os, shutil, subprocess
    where = shutil.which("nvidia-smi")
    def run(*args):
        done = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True)
        return done.returncode, done.stdout
    print(json.dumps({"where": where, "root": sorted(os.listdir("/")),
                      "devices": open("/proc/devices").read(), "interrupts": open("/proc/interrupts").read(),
                      "env": {k: v for k, v in os.environ.items() if k.startswith(("NVIDIA_", "CUDA_"))},
                      "query": run("--query-gpu=name,memory.total", "--format=csv,noheader,nounits") if where else None,
                      "table": run()[1] if where else None, "list": run("-L")[1] if where else None}))
"""


@needs_namespaces
@no_gpu
def test_a_jailed_child_finds_nvidia_smi_in_usr_bin_naming_the_simulated_card_as_torch_does():
    card = public(config("a100-80gb"))
    host_had = os.path.lexists("/usr/bin/nvidia-smi")
    info = seen(SMI_SEEN, limits=JailLimits(sim_profile="a100-80gb"))
    assert info["where"] == "/usr/bin/nvidia-smi"
    assert info["query"] == [0, f"{card['name']}, {card['memory_bytes'] // 2**20}\n"]
    assert card["name"] in info["table"] and f"{card['memory_bytes'] // 2**20}MiB" in info["table"]
    assert info["list"].startswith(f"GPU 0: {card['name']} (UUID: GPU-")
    assert ".smi" not in info["root"] and ".proc" not in info["root"]      # the layers' mount points are gone
    # the kernel-wide lists show the driver's character devices and interrupt, and the environment
    # is a GPU container's
    assert {"195 nvidia", "195 nvidiactl", "508 nvidia-uvm"} <= {line.strip() for line in info["devices"].splitlines()}
    assert any(line.split()[-1:] == ["nvidia"] for line in info["interrupts"].splitlines())
    assert info["env"]["NVIDIA_VISIBLE_DEVICES"] == "all" and info["env"]["CUDA_VERSION"].startswith("12.8")
    assert os.path.lexists("/usr/bin/nvidia-smi") == host_had       # the host's /usr/bin is as it was


@needs_namespaces
@no_gpu
def test_without_a_simulated_card_the_child_finds_no_nvidia_smi_nor_a_gpu_containers_environment():
    info = seen(SMI_SEEN)
    assert info["where"] is None and "NVIDIA_VISIBLE_DEVICES" not in info["env"]


def test_nvidia_smi_answers_queries_as_the_real_tool_and_refuses_an_unknown_field(tmp_path):
    tool = tmp_path / "nvidia-smi"
    tool.write_text(smi.script("h100-sxm"))
    tool.chmod(0o755)
    card = public(config("h100-sxm"))

    def run(*args):
        done = subprocess.run([str(tool), *args], capture_output=True, text=True)
        return done.returncode, done.stdout

    mib = card["memory_bytes"] // 2**20
    assert run("--query-gpu=name,memory.total,compute_cap", "--format=csv") == (
        0, f"name, memory.total [MiB], compute_cap\n{card['name']}, {mib} MiB, {card['major']}.{card['minor']}\n")
    assert run("--query-gpu=memory.total", "--format=csv,noheader,nounits") == (0, f"{mib}\n")
    refused = 'Field "clocks.bogus" is not a valid field to query.\n'
    assert run("--query-gpu=clocks.bogus", "--format=csv") == (2, refused)
    lines = run()[1].splitlines()
    assert {len(line) for line in lines[1:]} == {91} and "Driver Version: " + rootfs.DRIVER in lines[2]


def test_nvidia_smi_lists_each_running_process_that_holds_memory(tmp_path, monkeypatch):
    """Each process's file (shared/simgpu/driver.py ``hold``: bytes held, then its L2 size) shows
    in the table's process list, the memory in use and --query-compute-apps; a file of a process
    that has ended, or that is not a number, is left out, as the driver forgets an ended process."""
    folder = tmp_path / "held"
    folder.mkdir()
    (folder / str(os.getpid())).write_text(f"{3 * 2**30} {50 * 2**20}".ljust(47) + "\n")
    ended = subprocess.Popen(["true"])
    ended.wait()                                       # its pid: no process's any more
    (folder / str(ended.pid)).write_text(f"{2**30} 0\n")
    (folder / "x").write_text("garbage\n")
    monkeypatch.setattr(smi, "MEMORY_FOLDER", str(folder))
    tool = tmp_path / "nvidia-smi"
    tool.write_text(smi.script.__wrapped__("h100-sxm"))
    tool.chmod(0o755)
    mib = public(config("h100-sxm"))["memory_bytes"] // 2**20

    def run(*args):
        return subprocess.run([str(tool), *args], capture_output=True, text=True).stdout

    table = run().splitlines()
    assert {len(line) for line in table[1:]} == {91}
    assert f"3072MiB /  {mib}MiB" in "\n".join(table) and "No running processes found" not in "\n".join(table)
    mine = [line for line in table if f" {os.getpid()} " in line]
    assert len(mine) == 1 and mine[0].endswith("3072MiB |")
    assert run("--query-gpu=memory.used,memory.free", "--format=csv,noheader,nounits") == f"3072, {mib - 3072}\n"
    name = open(f"/proc/{os.getpid()}/cmdline", "rb").read().split(b"\0")[0].decode()
    assert run("--query-compute-apps=pid,process_name,used_memory", "--format=csv") == (
        f"pid, process_name, used_gpu_memory [MiB]\n{os.getpid()}, {name}, 3072 MiB\n")
    detail = [line.split(":", 1) for line in run("-q").splitlines() if ":" in line]
    fields = [(key.strip(), value.strip()) for key, value in detail]
    assert ("Used", "3072 MiB") in fields and ("Process ID", str(os.getpid())) in fields
    assert fields[fields.index(("Process ID", str(os.getpid()))) + 3] == ("Used GPU Memory", "3072 MiB")


@pytest.mark.parametrize("profile", gpu_keys())
def test_every_profiles_nvidia_smi_names_its_card_as_torch_does(profile, tmp_path):
    tool = tmp_path / "nvidia-smi"
    tool.write_text(smi.script(profile))
    tool.chmod(0o755)
    card = public(config(profile))
    done = subprocess.run([str(tool), "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
                          capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, f"{card['name']}, {card['memory_bytes'] // 2**20}\n")


def test_a_card_name_with_shell_quotes_is_printed_as_it_is(tmp_path, monkeypatch):
    cfg = dict(config("l4"), cuda_name="Lab's \"test\" card $HOME")
    monkeypatch.setattr(smi, "config", lambda profile: cfg)
    tool = tmp_path / "nvidia-smi"
    tool.write_text(smi.script.__wrapped__("l4"))
    tool.chmod(0o755)
    said = [subprocess.run([str(tool), *args], capture_output=True, text=True).stdout
            for args in (["--query-gpu=name", "--format=csv,noheader"], ["-L"], [])]
    assert said[0] == "Lab's \"test\" card $HOME\n" and said[1].startswith("GPU 0: Lab's \"test\" card $HOME (UUID")
    assert "|   0  Lab's \"test\" card $HOME" in said[2]


LIBS_SEEN = """
    import ctypes, ctypes.util, json
    out = {"find": [ctypes.util.find_library("cuda"), ctypes.util.find_library("nvidia-ml")]}
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count, name, memory = ctypes.c_int(0), ctypes.create_string_buffer(96), ctypes.c_size_t(0)
        before = cuda.cuDeviceGetCount(ctypes.byref(count))
        out["cuda"] = [before, cuda.cuInit(0), cuda.cuDeviceGetCount(ctypes.byref(count)), count.value,
                       cuda.cuDeviceGetName(name, 96, 0), name.value.decode(),
                       cuda.cuDeviceTotalMem_v2(ctypes.byref(memory), 0), memory.value]
    except OSError as exc:
        out["cuda"] = str(exc)
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        count, name = ctypes.c_uint(0), ctypes.create_string_buffer(96)
        handle = ctypes.c_void_p()
        out["nvml"] = [nvml.nvmlInit_v2(), nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)), count.value,
                       nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)),
                       nvml.nvmlDeviceGetName(handle, name, 96), name.value.decode(), nvml.nvmlShutdown()]
    except OSError as exc:
        out["nvml"] = str(exc)
    print(json.dumps(out))
"""
no_compiler = pytest.mark.skipif(driverlibs.build("a100-80gb") is None,
                                 reason="this machine has no C compiler or ldconfig to build the driver's libraries")


@needs_namespaces
@no_gpu
@no_compiler
def test_a_jailed_child_loads_the_drivers_libraries_naming_the_simulated_card_as_torch_does():
    card = public(config("a100-80gb"))
    info = seen(LIBS_SEEN, limits=JailLimits(sim_profile="a100-80gb"))
    assert info["find"] == ["libcuda.so.1", "libnvidia-ml.so.1"]         # the loader's cache lists them
    # the driver API refuses to count before cuInit (3: not initialised), as the real one does
    assert info["cuda"] == [3, 0, 0, 1, 0, card["name"], 0, card["memory_bytes"]]
    assert info["nvml"] == [0, 0, 1, 0, 0, card["name"], 0]


@needs_namespaces
@no_gpu
def test_without_a_simulated_card_the_child_finds_no_driver_library():
    info = seen(LIBS_SEEN)
    assert info["find"] == [None, None]
    assert "cannot open" in info["cuda"] and "cannot open" in info["nvml"]


PCI_SEEN = """
    import glob, json, os
    found = {}
    for folder in glob.glob("/sys/bus/pci/devices/*"):
        try:
            found[os.path.basename(folder)] = [open(f"{folder}/{key}").read().strip() for key in ("vendor", "class")]
        except OSError as exc:
            found[os.path.basename(folder)] = str(exc)
    links = {os.path.basename(f): [os.path.islink(f), os.path.realpath(f),
                                   os.path.realpath(os.path.join(os.path.realpath(f), "driver"))]
             for f in glob.glob("/sys/bus/pci/devices/*")}
    nvidia = "/sys/bus/pci/drivers/nvidia"
    drivers = sorted(os.listdir(nvidia)) if os.path.isdir(nvidia) else None
    print(json.dumps({"found": found, "links": links, "drivers": drivers}))
"""


@needs_namespaces
@no_gpu
@pytest.mark.skipif(not os.path.isdir("/sys/bus/pci/devices"), reason="this machine's /sys lists no PCI bus")
def test_a_jailed_child_finds_the_cards_pci_function_beside_the_machines_own():
    """As sysfs shows a bound GPU: /sys/bus/pci/devices links into /sys/devices, and the
    function's ``driver`` link names nvidia, whose folder links back to it."""
    host = sorted(os.listdir("/sys/bus/pci/devices"))
    seen_all = seen(PCI_SEEN, limits=JailLimits(sim_profile="h100-sxm"))
    shown, links = seen_all["found"], seen_all["links"]
    card = smi.pci("h100-sxm")
    assert shown.pop(card["address"]) == ["0x10de", "0x030200"]             # an NVIDIA 3D controller
    assert sorted(shown) == host and all(isinstance(v, list) for v in shown.values())   # the host's, readable
    assert card["address"] == smi.BUS_ID[4:] and card["device"] == "0x2330"   # as nvidia-smi names it
    function = f"/sys/devices/pci0000:18/{card['address']}"
    assert links[card["address"]] == [True, function, "/sys/bus/pci/drivers/nvidia"]
    assert card["address"] in seen_all["drivers"]
    assert all(link[0] and link[1].startswith("/sys/devices/pci") for link in links.values())   # the host's too
    plain = seen(PCI_SEEN)
    assert not any(v[0] == "0x10de" for v in plain["found"].values() if isinstance(v, list))
    assert plain["drivers"] is None


CONTEXT_SEEN = """
    import site, sys
    site.main()                                   # the venv's packages (the jail runs python -I -S)
    sys.path.insert(0, sys.argv[1])               # the checkout, for shared/
    import ctypes, json, threading
    import torch
    from shared import simgpu
    from shared.simgpu.profile import config
    simgpu.install()
    cuda = ctypes.CDLL("libcuda.so.1")
    def current():
        ctx = ctypes.c_void_p()
        return cuda.cuCtxGetCurrent(ctypes.byref(ctx)), bool(ctx.value)
    with simgpu.active(config("a100-80gb")):
        torch.ones(4, device="cuda").add_(1)
        mine, device = current(), ctypes.c_int(-1)
        cuda.cuCtxGetDevice(ctypes.byref(device))
        fresh, used = [], []
        idle = threading.Thread(target=lambda: fresh.append(current()))
        busy = threading.Thread(target=lambda: (torch.ones(4, device="cuda").add_(1), used.append(current())))
        for t in (idle, busy):
            t.start()
            t.join()
        props = torch.cuda.get_device_properties(0)
        def attribute(number):
            value = ctypes.c_int(-1)
            cuda.cuDeviceGetAttribute(ctypes.byref(value), number, 0)
            return value.value
        attributes = {"sm": [attribute(16), props.multi_processor_count], "l2": [attribute(38), props.L2_cache_size],
                      "bus": [attribute(37), props.memory_bus_width], "clock": [attribute(36), props.memory_clock_rate]}
        uuid = str(props.uuid)
    gpus = "/proc/driver/nvidia/gpus/"
    print(json.dumps({"mine": mine, "device": device.value, "fresh": fresh, "used": used, "attributes": attributes,
                      "uuid": uuid, "information": open(gpus + "0000:18:00.0/information").read()}))
"""


@needs_namespaces
@no_gpu
@no_compiler
def test_the_driver_agrees_with_torch_and_gives_a_context_to_each_thread_that_uses_the_device():
    info = seen(CONTEXT_SEEN, str(Path(__file__).resolve().parents[2]), limits=JailLimits(sim_profile="a100-80gb"))
    assert info["mine"] == [0, True] and info["device"] == 0
    assert info["fresh"] == [[0, False]] and info["used"] == [[0, True]]   # as the CUDA runtime, lazily
    assert all(ours == torchs for ours, torchs in info["attributes"].values()), info["attributes"]
    assert info["uuid"].removeprefix("GPU-") in info["information"]
    assert "NVIDIA A100-SXM4-80GB" in info["information"] and "0000:18:00.0" in info["information"]


TEMPERATURE_SEEN = """
    import ctypes, json, subprocess
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    handle, celsius = ctypes.c_void_p(), ctypes.c_uint(0)
    nvml.nvmlInit_v2()
    nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle))
    rc = nvml.nvmlDeviceGetTemperature(handle, 0, ctypes.byref(celsius))
    smi = subprocess.run(["nvidia-smi", "--query-gpu=temperature.gpu", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True).stdout.strip()
    print(json.dumps([rc, celsius.value, smi]))
"""


@needs_namespaces
@no_gpu
@no_compiler
def test_nvml_and_nvidia_smi_read_the_same_temperature():
    rc, nvml, smi_reads = seen(TEMPERATURE_SEEN, limits=JailLimits(sim_profile="h100-sxm"))
    assert rc == 0 and nvml == int(smi_reads) == smi.TEMPERATURE_C


@needs_namespaces
@no_gpu
@pytest.mark.skipif(not os.path.isdir("/sys/bus/pci/devices") or not os.listdir("/sys/bus/pci/devices"),
                    reason="this machine's /sys lists no PCI function")
def test_a_host_function_at_the_cards_address_is_shown_as_it_is(monkeypatch):
    """Another machine may have a function of its own at the address the card is given: the jail
    then shows the host's folder unchanged rather than fail to build (or write into sysfs)."""
    host = sorted(os.listdir("/sys/bus/pci/devices"))
    taken = dict(smi.pci("h100-sxm"), address=host[0])
    monkeypatch.setattr(smi, "pci", lambda profile: taken)
    shown = seen(PCI_SEEN, limits=JailLimits(sim_profile="h100-sxm"))
    assert sorted(shown["found"]) == host and shown["drivers"] is None
    with open(f"/sys/bus/pci/devices/{host[0]}/vendor") as fh:
        assert shown["found"][host[0]][0] == fh.read().strip()


MEMORY_SEEN = """
    import site, sys
    site.main()                                   # the venv's packages (the jail runs python -I -S)
    sys.path.insert(0, sys.argv[1])               # the checkout, for shared/
    import ctypes, json, os, subprocess
    import torch
    from shared import simgpu
    from shared.simgpu.profile import config
    simgpu.install()
    nvml, cuda = ctypes.CDLL("libnvidia-ml.so.1"), ctypes.CDLL("libcuda.so.1")
    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]
    class Process(ctypes.Structure):
        _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong), ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]
    handle = ctypes.c_void_p()
    nvml.nvmlInit_v2()
    nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle))
    def smi(*args):
        return subprocess.run(["nvidia-smi", *args, "--format=csv,noheader,nounits"], capture_output=True,
                              text=True).stdout.strip()
    def look(on_device=True):
        m, procs, count = Memory(), (Process * 8)(), ctypes.c_uint(8)
        nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(m))
        nvml.nvmlDeviceGetComputeRunningProcesses_v3(handle, ctypes.byref(count), procs)
        out = {"nvml_used": m.used, "nvml_free": m.free, "procs": [[p.pid, p.used] for p in procs[:count.value]],
               "smi_used": int(smi("--query-gpu=memory.used")), "apps": smi("--query-compute-apps=pid,used_memory")}
        if on_device:
            free, total = ctypes.c_size_t(), ctypes.c_size_t()
            cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
            out.update(cuda_free=free.value, torch_free=torch.cuda.mem_get_info()[0])
        return out
    idle = look(on_device=False)
    with simgpu.active(config("h100-sxm", seed=3)):   # a seeded device: its L2 size drawn, not the card's
        start = look()
        held = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        holding = look()
        del held
        cached = look()                               # the caching allocator keeps it reserved
        torch.cuda.empty_cache()
        after = look()
        fds = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                fds.append(os.readlink("/proc/self/fd/" + fd))
            except OSError:
                pass
        l2 = ctypes.c_int(0)
        cuda.cuDeviceGetAttribute(ctypes.byref(l2), 38, 0)
        l2s = [l2.value, torch.cuda.get_device_properties(0).L2_cache_size]
    print(json.dumps({"pid": os.getpid(), "idle": idle, "start": start, "holding": holding, "cached": cached,
                      "after": after,
                      "l2": l2s, "fds": fds}))
"""


@needs_namespaces
@no_gpu
@no_compiler
def test_nvml_the_driver_and_nvidia_smi_follow_the_memory_the_process_holds():
    """What a process on the simulated device holds (its context and its allocations) is what
    NVML, cuMemGetInfo and nvidia-smi report, live, as torch.cuda.mem_get_info counts it: an
    allocation of 1 GiB shows in each and stays after ``del`` (the caching allocator keeps it
    reserved) until ``empty_cache`` gives it back; before the device starts, the card
    is idle (1 MiB in use, no process). The driver's L2 attribute is the seeded device's, as torch's;
    the process holds the driver's device files open, as a CUDA process does, and no file of the
    simulator's."""
    info = seen(MEMORY_SEEN, str(Path(__file__).resolve().parents[2]), limits=JailLimits(sim_profile="h100-sxm"))
    pid, total = info["pid"], public(config("h100-sxm"))["memory_bytes"]
    context = cudalib.software("context_bytes")
    assert info["idle"] == {"nvml_used": smi.IDLE_BYTES, "nvml_free": total - smi.IDLE_BYTES, "procs": [],
                            "smi_used": 1, "apps": ""}
    for key, held in (("start", context), ("holding", context + 2**30), ("cached", context + 2**30),
                      ("after", context)):
        seen_then = info[key]
        assert seen_then["nvml_used"] == held and seen_then["procs"] == [[pid, held]], key
        assert seen_then["cuda_free"] == seen_then["torch_free"] == seen_then["nvml_free"] == total - held, key
        assert seen_then["smi_used"] == held // 2**20 and seen_then["apps"] == f"{pid}, {held // 2**20}", key
    assert info["l2"] == [config("h100-sxm", seed=3)["l2_bytes"]] * 2 != [config("h100-sxm")["l2_bytes"]] * 2
    assert {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"} <= set(info["fds"])
    assert not [path for path in info["fds"] if path.startswith("/dev/shm")]
