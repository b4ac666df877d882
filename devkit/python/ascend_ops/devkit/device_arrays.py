"""NumPy arrays placed as device allocations are, for the benches that model NPU time on the emulator.

Device tensors start on 512-byte boundaries: torch_npu's caching allocator hands out blocks in
multiples of 512 bytes (NPUCachingAllocator.cpp, kMinBlockSize = 512) from segments of 2 MiB
pages. The emulator models the L2 with 512-byte lines at the arrays' host addresses, and NumPy's
large arrays start 16 bytes into a page, so an unaligned array touches lines a device tensor would
not (sparse_flash_attention's gathered 1 KiB latent rows: three lines instead of two).
"""
from __future__ import annotations

import numpy as np

__all__ = ["DEVICE_ALIGN", "device", "device_case"]

DEVICE_ALIGN = 512


def device(a: np.ndarray) -> np.ndarray:
    """A copy of `a` starting on a DEVICE_ALIGN-byte boundary (as a device allocation does)."""
    buf = np.empty(a.nbytes + DEVICE_ALIGN, np.uint8)
    at = (-buf.ctypes.data) % DEVICE_ALIGN
    out = buf[at:at + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def device_case(case: dict) -> dict:
    """`case` with every NumPy array replaced by its DEVICE_ALIGN-aligned copy."""
    return {k: device(v) if isinstance(v, np.ndarray) else v for k, v in case.items()}
