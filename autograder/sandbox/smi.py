"""nvidia-smi as a machine with the simulated GPU's card has it: a program in the child's
/usr/bin (autograder/sandbox/rootfs.py, ``present_smi``) that prints the card's name and memory
as torch.cuda reports them, so that a program cannot tell the simulated GPU by the driver's tool
being absent, nor by its answer disagreeing with torch.

``script(profile)`` is the program's text (a POSIX shell script, run by the jail's /bin/sh):
the usual table, ``-L`` and ``--query-gpu=FIELDS --format=csv[,noheader][,nounits]`` for the
fields ``_fields`` lists; any other field is refused as the real tool refuses it (exit 2). Nothing in
it depends on the secret seed: only the card's fixed facts (name, memory) and the driver's.
"""
from __future__ import annotations

import functools
import shlex

from autograder.sandbox.rootfs import DRIVER
from shared.simgpu import CUDA_VERSION
from shared.simgpu.profile import config, constants
from shared.simgpu.properties import PCI_BUS, UUID

#: What NVIDIA's CUDA container images (nvidia/cuda, their Dockerfiles' ENV lines) set in every
#: process, for the CUDA 12.8 the simulated GPU reports: a grading child that shows nvidia-smi
#: shows these too, as a GPU container would.
CONTAINER_ENV = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
                 "NVIDIA_REQUIRE_CUDA": "cuda>=12.8", "CUDA_VERSION": "12.8.1", "NV_CUDA_LIB_VERSION": "12.8.1-1"}
#: The card's place on the PCI bus and its UUID, as nvidia-smi prints them: torch.cuda's
#: (get_device_properties' pci_bus_id and uuid).
BUS_ID = f"00000000:{PCI_BUS:02x}:00.0"
#: The card's temperature at idle, in degrees Celsius, as nvidia-smi and NVML report it (a data-centre
#: card idles near 30 C; any fixed value: both tools read the same sensor).
TEMPERATURE_C = 31


def pci(profile: str) -> dict | None:
    """The card's PCI function as /sys/bus/pci/devices shows it (rootfs.present_pci): its
    address (BUS_ID's, with the kernel's 4-digit domain) and the vendor, device and class files'
    values (shared/data/simgpu.yml, ``pci``); None for a profile the data lists no device for."""
    data = constants()["pci"]
    part = data["devices"].get(profile)
    if part is None:
        return None
    return {"address": BUS_ID[4:], "vendor": data["vendor"], "subsystem_vendor": data["vendor"],
            "device": part["device"], "class": part["class"]}


def information(profile: str) -> str:
    """/proc/driver/nvidia/gpus/<address>/information as the driver writes it for the card."""
    rows = (("Model", config(profile)["cuda_name"]), ("IRQ", "120"), ("GPU UUID", UUID),
            ("Video BIOS", "96.00.74.00.0d"), ("Bus Type", "PCIe"), ("DMA Size", "52 bits"),
            ("DMA Mask", "0xfffffffffffff"), ("Bus Location", BUS_ID[4:]), ("Device Minor", "0"),
            ("GPU Excluded", "No"))
    return "".join(f"{key + ':':<14}\t {value}\n" for key, value in rows)


def _fields(name: str, mib: int, capability: str) -> dict[str, tuple[str, str]]:
    """--query-gpu field -> (header with its unit, value with its unit)."""
    return {"index": ("index", "0"), "count": ("count", "1"), "name": ("name", name),
            "uuid": ("uuid", UUID), "driver_version": ("driver_version", DRIVER),
            "pci.bus_id": ("pci.bus_id", BUS_ID), "compute_cap": ("compute_cap", capability),
            "memory.total": ("memory.total [MiB]", f"{mib} MiB"),
            "memory.used": ("memory.used [MiB]", "1 MiB"),
            "memory.free": ("memory.free [MiB]", f"{mib - 1} MiB"),
            "utilization.gpu": ("utilization.gpu [%]", "0 %"),
            "temperature.gpu": ("temperature.gpu", str(TEMPERATURE_C)),
            "persistence_mode": ("persistence_mode", "Enabled")}



def _table(name: str, mib: int) -> str:
    """The default output: one card, no processes."""
    bar = "+" + "-" * 41 + "+" + "-" * 24 + "+" + "-" * 22 + "+"
    wide = "+" + "-" * 89 + "+"
    rows = [
        wide,
        "|" + f" NVIDIA-SMI {DRIVER:<22}Driver Version: {DRIVER:<15}CUDA Version: {CUDA_VERSION}".ljust(89) + "|",
        bar.replace("+", "|", 1)[:-1] + "+",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|" + "=" * 41 + "+" + "=" * 24 + "+" + "=" * 22 + "|",
        f"|   0  {name[:30]:<31}On  |   {BUS_ID} Off |                    0 |",
        f"| N/A   {TEMPERATURE_C}C    P0             70W /  700W | "
        f"{'1MiB /  ' + str(mib) + 'MiB':>22} |      0%      Default |",
        "|                                         |                        |             Disabled |",
        bar, " " * 91, wide,
        "| Processes:" + " " * 78 + "|",
        "|  GPU   GI   CI              PID   Type   Process name" + " " * 24 + "GPU Memory |",
        "|        ID   ID" + " " * 63 + "Usage      |",
        "|" + "=" * 89 + "|",
        "|  No running processes found" + " " * 61 + "|",
        wide,
    ]
    return "\n".join(rows)


@functools.lru_cache(maxsize=16)
def script(profile: str) -> str:
    """The text of /usr/bin/nvidia-smi for a machine with ``profile``'s card (a simgpu profile key)."""
    cfg = config(profile)
    name, mib = cfg["cuda_name"], cfg["memory_bytes"] // 2**20
    fields = _fields(name, mib, f"{cfg['major']}.{cfg['minor']}")
    cases = "\n".join(f"    {key}) head={shlex.quote(h)}; value={shlex.quote(v)} ;;" for key, (h, v) in fields.items())
    table = _table(name, mib)
    listed = shlex.quote(f"GPU 0: {name} (UUID: {UUID})")
    return f"""#!/bin/sh
query=""; format=""
for arg in "$@"; do
  case "$arg" in
    -L|--list-gpus) printf '%s\\n' {listed}; exit 0 ;;
    --query-gpu=*) query="${{arg#--query-gpu=}}" ;;
    --format=*) format="${{arg#--format=}}" ;;
    -h|--help) echo "NVIDIA System Management Interface -- v{DRIVER}"; exit 0 ;;
  esac
done
if [ -z "$query" ]; then
  date '+%a %b %e %H:%M:%S %Y'
  cat <<'EOF'
{table}
EOF
  exit 0
fi
case ",$format," in *,csv,*) ;; *) echo "--format=csv is required with --query-gpu."; exit 2 ;; esac
heads=""; values=""
IFS=,
for field in $query; do
  case "$field" in
{cases}
    *) echo "Field \\"$field\\" is not a valid field to query."; exit 2 ;;
  esac
  case ",$format," in *,nounits,*) value="${{value% MiB}}"; value="${{value% %}}"; head="${{head% \\[*}}" ;; esac
  heads="${{heads:+$heads, }}$head"; values="${{values:+$values, }}$value"
done
case ",$format," in *,noheader,*) ;; *) echo "$heads" ;; esac
echo "$values"
"""
