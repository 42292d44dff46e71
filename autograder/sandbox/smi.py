"""nvidia-smi as a machine with the simulated GPU's card has it: a program in the child's
/usr/bin (autograder/sandbox/rootfs.py, ``present_smi``) that prints the card's name and memory
as torch.cuda reports them, so that a program cannot tell the simulated GPU by the driver's tool
being absent, nor by its answer disagreeing with torch.

``script(profile)`` is the program's text (a POSIX shell script, run by the jail's /bin/sh):
the usual table, ``-L``, ``--query-gpu=FIELDS`` and ``--query-compute-apps=FIELDS`` with
``--format=csv[,noheader][,nounits]`` for the fields ``_fields`` and ``_app_fields`` list; any
other field is refused as the real tool refuses it (exit 2). The memory in use and the processes
holding it are read when it runs, from what each process on the simulated device writes
(shared/simgpu/driver.py, ``hold``), as NVML reads them (autograder/sandbox/driverlibs.py).
Nothing in it depends on the secret seed: only the card's fixed facts (name, memory) and the driver's.
"""
from __future__ import annotations

import functools
import shlex

from autograder.sandbox.rootfs import DRIVER
from shared.simgpu import CUDA_VERSION
from shared.simgpu.driver import MEMORY_FOLDER
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
    """--query-gpu field -> (header with its unit, value with its unit, as shell words: the memory
    in use is the shell's ``$used``, in MiB, read when the tool runs)."""
    words = {"index": ("index", "0"), "count": ("count", "1"), "name": ("name", name),
             "uuid": ("uuid", UUID), "driver_version": ("driver_version", DRIVER),
             "pci.bus_id": ("pci.bus_id", BUS_ID), "compute_cap": ("compute_cap", capability),
             "memory.total": ("memory.total [MiB]", f"{mib} MiB"),
             "utilization.gpu": ("utilization.gpu [%]", "0 %"),
             "temperature.gpu": ("temperature.gpu", str(TEMPERATURE_C)),
             "persistence_mode": ("persistence_mode", "Enabled")}
    out = {key: (head, shlex.quote(value)) for key, (head, value) in words.items()}
    out["memory.used"] = ("memory.used [MiB]", '"$used MiB"')
    out["memory.free"] = ("memory.free [MiB]", f'"$(({mib} - used)) MiB"')
    return out


def _app_fields(name: str) -> dict[str, tuple[str, str]]:
    """--query-compute-apps field -> (header with its unit, value as shell words: one process's
    ``$pid``, ``$name`` and ``$mib``, the MiB it holds)."""
    memory = ("used_gpu_memory [MiB]", '"$mib MiB"')
    return {"pid": ("pid", '"$pid"'), "process_name": ("process_name", '"$name"'),
            "name": ("process_name", '"$name"'), "used_memory": memory, "used_gpu_memory": memory,
            "gpu_uuid": ("gpu_uuid", shlex.quote(UUID)), "gpu_bus_id": ("gpu_bus_id", shlex.quote(BUS_ID)),
            "gpu_name": ("gpu_name", shlex.quote(name))}


def _case(fields: dict[str, tuple[str, str]], what: str) -> str:
    """A shell case over ``$field`` setting ``head`` and ``value``; any other field is refused
    as the real tool refuses it (exit 2)."""
    arms = [f"    {key}) head={shlex.quote(head)}; value={value} ;;" for key, (head, value) in fields.items()]
    arms.append(f'    *) echo "Field \\"$field\\" is not a valid field to {what}."; exit 2 ;;')
    return "  case \"$field\" in\n" + "\n".join(arms) + "\n  esac"


def _table(name: str, mib: int) -> tuple[str, str, str]:
    """The default output around the lines the shell writes: (the lines above the card's memory
    in use, that line as a printf format, the lines between it and the processes)."""
    bar = "+" + "-" * 41 + "+" + "-" * 24 + "+" + "-" * 22 + "+"
    top = [
        WIDE,
        "|" + f" NVIDIA-SMI {DRIVER:<22}Driver Version: {DRIVER:<15}CUDA Version: {CUDA_VERSION}".ljust(89) + "|",
        bar.replace("+", "|", 1)[:-1] + "+",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|" + "=" * 41 + "+" + "=" * 24 + "+" + "=" * 22 + "|",
        f"|   0  {name[:30]:<31}On  |   {BUS_ID} Off |                    0 |",
    ]
    memory = f"| N/A   {TEMPERATURE_C}C    P0             70W /  700W | %22s |      0%%      Default |\\n"
    middle = [
        "|                                         |                        |             Disabled |",
        bar, " " * 91, WIDE,
        "| Processes:" + " " * 78 + "|",
        "|  GPU   GI   CI              PID   Type   Process name" + " " * 24 + "GPU Memory |",
        "|        ID   ID" + " " * 63 + "Usage      |",
        "|" + "=" * 89 + "|",
    ]
    return "\n".join(top), memory, "\n".join(middle)


#: The table's closing line.
WIDE = "+" + "-" * 89 + "+"
#: One process's line of the table (pid, name, MiB held), a printf format: 91 characters.
PROCESS_LINE = "|    0   N/A  N/A    %10s      C   %-37.37s %7sMiB |\\n"
#: An idle card's memory in use, in bytes, as nvidia-smi reports it ("1MiB"): NVML's too.
IDLE_BYTES = 2**20

#: The tool's text, its parts named @NAME@ (``script`` fills them in).
_SCRIPT = r"""#!/bin/sh
query=""; apps=""; format=""; detail=""
for arg in "$@"; do
  case "$arg" in
    -L|--list-gpus) printf '%s\n' @LISTED@; exit 0 ;;
    --query-gpu=*) query="${arg#--query-gpu=}" ;;
    --query-compute-apps=*) apps="${arg#--query-compute-apps=}" ;;
    --format=*) format="${arg#--format=}" ;;
    -q|--query) detail=1 ;;
    -h|--help) echo "NVIDIA System Management Interface -- v@DRIVER@"; exit 0 ;;
  esac
done
# the device memory each running process holds, as it wrote it (shared/simgpu/driver.py, hold)
used=0; held=""
for entry in @FOLDER@/*; do
  pid="${entry##*/}"
  case "$pid" in ''|*[!0-9]*) continue ;; esac
  [ -d "/proc/$pid" ] || continue
  bytes=""; read -r bytes _l2 < "$entry" 2>/dev/null
  case "$bytes" in ''|*[!0-9]*) continue ;; esac
  mib=$((bytes / 1048576)); used=$((used + mib)); held="$held $pid:$mib"
done
[ "$used" -gt 0 ] || used=@IDLE_MIB@
name_of() { tr '\000' '\n' < "/proc/$1/cmdline" 2>/dev/null | head -n 1; }
if [ -n "$detail" ]; then
  printf '\n==============NVSMI LOG==============\n\n'
  date '+Timestamp                                 : %a %b %e %H:%M:%S %Y'
  printf '%-42s: %s\n' "Driver Version" "@DRIVER@" "CUDA Version" "@CUDA@"
  printf '\n%-42s: %s\n' "Attached GPUs" 1
  printf 'GPU @BUS@\n'
  printf '    %-38s: %s\n' "Product Name" @QUOTED_NAME@ "Product Brand" "NVIDIA" "GPU UUID" "@UUID@"
  printf '    FB Memory Usage\n'
  printf '        %-34s: %s MiB\n' "Total" "@MIB@" "Used" "$used" "Free" "$((@MIB@ - used))"
  printf '    Processes\n'
  [ -n "$held" ] || printf '        None\n'
  for one in $held; do
    printf '        %-34s: %s\n' "GPU instance ID" "N/A" "Compute instance ID" "N/A" "Process ID" "${one%%:*}" \
      "Type" "C" "Name" "$(name_of "${one%%:*}")" "Used GPU Memory" "${one#*:} MiB"
  done
  exit 0
fi
if [ -z "$query$apps" ]; then
  date '+%a %b %e %H:%M:%S %Y'
  cat <<'EOF'
@TOP@
EOF
  printf '@MEMORY@' "${used}MiB /  @MIB@MiB"
  cat <<'EOF'
@MIDDLE@
EOF
  [ -n "$held" ] || echo '|  No running processes found@SPACES@|'
  for one in $held; do
    printf '@PROCESS@' "${one%%:*}" "$(name_of "${one%%:*}")" "${one#*:}"
  done
  echo '@WIDE@'
  exit 0
fi
case ",$format," in *,csv,*) ;; *) echo "--format=csv is required with --query-gpu."; exit 2 ;; esac
gpu_field() {
@GPU_CASE@
}
app_field() {
@APP_CASE@
}
row() {
  heads=""; values=""; IFS=,
  for field in $2; do
    "$1"
    case ",$format," in *,nounits,*) value="${value% MiB}"; value="${value% %}"; head="${head% \[*}" ;; esac
    heads="${heads:+$heads, }$head"; values="${values:+$values, }$value"
  done
  unset IFS
}
header() { case ",$format," in *,noheader,*) ;; *) echo "$heads" ;; esac; }
if [ -n "$query" ]; then
  row gpu_field "$query"; header; echo "$values"; exit 0
fi
pid=""; name=""; mib=0
row app_field "$apps"; header
for one in $held; do
  pid="${one%%:*}"; mib="${one#*:}"; name="$(name_of "$pid")"
  row app_field "$apps"; echo "$values"
done
"""


@functools.lru_cache(maxsize=16)
def script(profile: str) -> str:
    """The text of /usr/bin/nvidia-smi for a machine with ``profile``'s card (a simgpu profile
    key): the usual table, ``-L``, ``-q`` (the card, its memory and processes),
    ``--query-gpu`` and ``--query-compute-apps`` (with
    ``--format=csv[,noheader][,nounits]``); the memory in use and the processes holding it are
    read when it runs, from what each process on the simulated device writes."""
    cfg = config(profile)
    name, mib = cfg["cuda_name"], cfg["memory_bytes"] // 2**20
    top, memory, middle = _table(name, mib)
    parts = {"LISTED": shlex.quote(f"GPU 0: {name} (UUID: {UUID})"), "DRIVER": DRIVER, "FOLDER": MEMORY_FOLDER,
             "CUDA": CUDA_VERSION, "BUS": BUS_ID, "QUOTED_NAME": shlex.quote(name), "UUID": UUID,
             "IDLE_MIB": str(IDLE_BYTES // 2**20), "TOP": top, "MEMORY": memory, "MIB": str(mib),
             "MIDDLE": middle, "SPACES": " " * 61, "PROCESS": PROCESS_LINE, "WIDE": WIDE,
             "GPU_CASE": _case(_fields(name, mib, f"{cfg['major']}.{cfg['minor']}"), "query"),
             "APP_CASE": _case(_app_fields(name), "query")}
    text = _SCRIPT
    for key, value in parts.items():
        text = text.replace(f"@{key}@", value)
    return text
