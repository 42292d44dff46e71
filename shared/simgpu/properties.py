"""What torch.cuda.get_device_properties reports for the simulated device."""
from __future__ import annotations


class SimDeviceProperties:
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
        self.is_multi_gpu_board = False
        self.max_threads_per_multi_processor = 2048
        self.warp_size = 32
        self.regs_per_multiprocessor = 65536
        self.gcnArchName = ""
        self.uuid = "00000000-0000-0000-0000-000000000000"

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2**20}MB, multi_processor_count="
                f"{self.multi_processor_count}, L2_cache_size={self.L2_cache_size // 2**20}MB)")
