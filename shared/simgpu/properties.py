"""What torch.cuda.get_device_properties reports for the simulated device: torch's fields, under
torch's class name."""
from __future__ import annotations

#: The card's UUID, as torch.cuda, nvidia-smi, NVML and the driver's /proc files all report it (any
#: fixed value: one card, the same everywhere).
UUID = "GPU-5d3bd6c1-8f0e-2a47-9b1c-4e6f0a7d2c91"
#: The card's PCI bus number (its address 0000:18:00.0).
PCI_BUS = 0x18


class _CudaDeviceProperties:
    """Like torch's _CudaDeviceProperties: name, total_memory and L2_cache_size in bytes, SMs."""

    def __init__(self, cfg: dict):
        """``cfg``: the device's public fields (shared.simgpu.profile.public)."""
        self.name = cfg["name"]
        self.total_memory = cfg["memory_bytes"]
        self.L2_cache_size = cfg["l2_bytes"]
        self.multi_processor_count = cfg["sm_count"]
        self.major = cfg["major"]
        self.minor = cfg["minor"]
        self.is_integrated = cfg["integrated"]
        self.memory_clock_rate = cfg["memory_clock_khz"]
        self.memory_bus_width = cfg["bus_width_bits"]
        self.clock_rate = 1_755_000
        self.is_multi_gpu_board = False
        self.max_threads_per_multi_processor = 2048
        self.warp_size = 32
        self.regs_per_multiprocessor = 65536
        self.gcnArchName = ""
        self.uuid = UUID
        self.pci_bus_id, self.pci_device_id, self.pci_domain_id = PCI_BUS, 0, 0

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2**20}MB, multi_processor_count="
                f"{self.multi_processor_count}, uuid={self.uuid.removeprefix('GPU-')}, pci_bus_id={self.pci_bus_id}, "
                f"pci_device_id={self.pci_device_id}, pci_domain_id={self.pci_domain_id}, "
                f"L2_cache_size={self.L2_cache_size // 2**20}MB)")
