"""One "is this roof a CPU's" rule (review s19 x2 F16).

A roof file with no machine evidence (one fp64 vector ceiling, one DRAM: x2's box.json)
was a GPU to `ai elementwise --stride` (32-byte sectors from L2) and a CPU to `ai spmv`
(the write-allocate read of y). Both now ask model.machine.is_cpu: a roof of unknown kind
is a CPU's, and the strided byte model says it assumed so.
"""

from __future__ import annotations

from rooflab.cli.ai_occupancy import strided_op, transfer_unit
from rooflab.model.byte_convention import roof_write_allocates
from rooflab.model.roof_schema import roof_from_dict
from rooflab.workloads.ops import elementwise

BOX = {"name": "box", "kind": "measured",
       "compute": [{"precision": "fp64", "unit": "vector", "flop_per_s": 1e11,
                    "provenance": "measured"}],
       "memory": [{"level": "DRAM", "bytes_per_s": 2e10, "provenance": "measured"}]}
H100 = {"name": "NVIDIA H100 SXM", "kind": "nominal",
        "compute": [{"precision": "fp64", "unit": "vector", "flop_per_s": 3.4e13,
                     "provenance": "nominal"}],
        "memory": [{"level": "DRAM", "bytes_per_s": 3.35e12, "provenance": "nominal"}]}


def test_a_roof_of_unknown_kind_is_a_cpu_for_both_byte_models():
    box = roof_from_dict(BOX, "box.json")
    assert roof_write_allocates(box) is True
    assert transfer_unit(box) == (64, "line")


def test_a_gpu_roof_is_a_gpu_for_both():
    h100 = roof_from_dict(H100, "h100.json")
    assert roof_write_allocates(h100) is False
    assert transfer_unit(h100) == (32, "sector")


def test_the_strided_byte_model_says_the_cpu_was_assumed():
    # 1e6 fp64 at stride 16 (128 B apart): one 64-byte line per element, each array
    # 64 MB; one input and one output, 128 MB
    box = roof_from_dict(BOX, "box.json")
    new, _ = strided_op(elementwise(1e6, "fp64"), 16, box)
    assert new.bytes == 128e6
    assert "whole 64-byte lines moved" in new.byte_model
    assert new.byte_model.endswith("a CPU assumed: the roof names no machine kind (no host, "
                                   "name or method evidence)")
