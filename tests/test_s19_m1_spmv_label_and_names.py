"""Two labels of `rooflab ai` counts (review s19): a GPU SpMV, whose count leaves out y's
write-allocate read, is not marked "real traffic" (x1 F9), and attention's name carries
its output dtype when it differs from the input's, as matmul's and conv2d's do (x2 F20),
so two counts with different O bytes are not matched as one kernel by `compare`."""

from __future__ import annotations

from rooflab.model.byte_convention import REAL_TRAFFIC_COUNT, holds_write_allocate
from rooflab.workloads import ops


def test_gpu_spmv_is_not_real_traffic():
    gpu = ops.spmv(2_000_000, 54_000_000, write_allocate=False)
    cpu = ops.spmv(2_000_000, 54_000_000)
    # y is 2e6 x 8 B = 16 MB; the CPU count holds its write-allocate read, the GPU's not
    assert cpu.bytes - gpu.bytes == 16e6
    assert "byte_count" not in gpu.kernel().meta
    assert not holds_write_allocate(gpu.kernel())
    assert not holds_write_allocate(gpu.scaled(2.0).kernel())
    assert cpu.kernel().meta["byte_count"] == REAL_TRAFFIC_COUNT
    assert holds_write_allocate(cpu.kernel())


def test_attention_name_carries_its_output_dtype():
    fp8 = ops.attention(1, 8, 128, 128, 64, dtype="fp8")
    bf16_out = ops.attention(1, 8, 128, 128, 64, dtype="fp8", out_dtype="bf16")
    assert fp8.name == "attention_flash_b1h8q128kv128d64_fp8"
    assert bf16_out.name == "attention_flash_b1h8q128kv128d64_fp8_outbf16"
    # O [1, 8, 128, 64]: 65,536 elements at 2 B instead of 1
    assert bf16_out.bytes - fp8.bytes == 65536.0
    same = ops.attention(1, 8, 128, 128, 64, dtype="fp16", out_dtype="fp16")
    assert same.name == "attention_flash_b1h8q128kv128d64_fp16"
