"""`whatif --precision` says each moved kernel's new dtype (session 30 hd): a kernel named
for the old dtype ('gemm_fp16_1024', `rooflab ai`'s 'maxpool_3x3_s2_n8c64_112x112_fp16',
the demo's 'triad_fp64') kept that name at the new one. Since session 31 the name is kept
and marked, never rewritten (s30 replaced the token and made cuBLAS names cuBLAS does not
ship, 'ampere_fp8_s16816gemm_fp8_...'): 'triad_fp64 [fp64->fp32]'. 'tf32gemm', cuBLAS's
's16816gemm', a template's '<4, float>' say no dtype and stay unmarked.

Hand numbers (A100 80GB SXM, DRAM 2,039 GB/s, launch floor 5 us): triad_fp64 moves
2.4e8 B in 20 ms; in fp32 its bytes halve, so its work (20 ms - 5 us) halves at the same
efficiency: 9.9975 + 0.005 = 10.0025 ms; its work floor 2.4e8 / 2.039e12 = 117.7 us ->
58.85 us.
"""

from __future__ import annotations

import json

import pytest

from rooflab import load_roof
from rooflab.cli.main import main
from rooflab.model import Kernel
from rooflab.model.dtype_names import marked_name, renamed_in_dtype
from rooflab.model.whatif_precision import change_precision

A100 = "A100 80GB SXM"


@pytest.mark.parametrize("name, old, new, renamed", [
    ("gemm_fp16_1024", "fp16", "fp8", "gemm_fp16_1024 [fp16->fp8]"),
    ("maxpool_3x3_s2_n8c64_112x112_fp16", "fp16", "fp32",
     "maxpool_3x3_s2_n8c64_112x112_fp16 [fp16->fp32]"),
    ("GEMM_FP64_TN", "fp64", "fp32", "GEMM_FP64_TN [fp64->fp32]"),   # the name as it is
    ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn", "fp16", "fp8",
     "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn [fp16->fp8]"),   # no fp8 name made
    ("cutlass_80_tensorop_f16_s16816gemm_f16_128x128_32x3_nn_align8", "fp16", "bf16",
     "cutlass_80_tensorop_f16_s16816gemm_f16_128x128_32x3_nn_align8 [fp16->bf16]"),
    ("matmul_fp8_e4m3", "fp8", "fp16", "matmul_fp8_e4m3 [fp8->fp16]"),
    ("int8_gemm", "int8", "fp8", "int8_gemm [int8->fp8]"),
    ("fp16_to_fp32_copy", "fp16", "fp8", "fp16_to_fp32_copy [fp16->fp8]"),
    # no token of the old dtype: the name stays, unmarked
    ("tf32gemm", "tf32", "fp16", "tf32gemm"),
    ("bf16x9_gemm", "bf16", "fp8", "bf16x9_gemm"),
    ("vectorized_elementwise_kernel<4, float>", "fp32", "fp16",
     "vectorized_elementwise_kernel<4, float>"),
    ("gemm_bf16", "fp16", "fp8", "gemm_bf16"),
    ("q_proj", "fp16", "fp8", "q_proj"),
])
def test_name_in_dtype(name, old, new, renamed):
    assert marked_name(name, "", {old}, old, new) == renamed


def test_a_kernel_whose_dtype_did_not_change_keeps_its_name():
    k = Kernel("softmax_fp32", {"fp32": 4e6}, {"DRAM": 8e6}, seconds=1e-3)
    assert renamed_in_dtype(k, k) is k
    moved = k.with_(flop={"fp16": 4e6}, bytes={"DRAM": 4e6})
    assert renamed_in_dtype(k, moved).name == "softmax_fp32 [fp32->fp16]"
    # a name another kernel of the file has already is not taken
    assert renamed_in_dtype(k, moved, taken={"softmax_fp32 [fp32->fp16]"}).name == "softmax_fp32"


def _whatif(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main(["whatif", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


ZOO = [{"name": "triad_fp64", "op": "triad", "flop": {"fp64": 2.0e7},
        "bytes": {"DRAM": 2.4e8}, "seconds": 2.0e-2},
       {"name": "gemm_fp64_256", "op": "matmul", "flop": {"fp64": 33_554_432},
        "bytes": {"DRAM": 1_572_864}, "seconds": 1.0e-3},
       {"name": "softmax_fp32", "op": "softmax", "flop": {"fp32": 4.0e6},
        "bytes": {"DRAM": 8.0e6}, "seconds": 1.0e-3}]


def _file(tmp_path, kernels) -> str:
    path = tmp_path / "kernels.json"
    path.write_text(json.dumps({"kernels": kernels}))
    return str(path)


def test_demo_like_kernels_are_renamed_in_the_json(tmp_path, capsys):
    d = _whatif(capsys, _file(tmp_path, ZOO), "--on", A100, "--precision", "fp32")
    assert [(m["kernel"], m["new_kernel"]) for m in d["moves"]] == [
        ("triad_fp64", "triad_fp64 [fp64->fp32]"),
        ("gemm_fp64_256", "gemm_fp64_256 [fp64->fp32]"), ("softmax_fp32", "softmax_fp32")]
    assert [k["name"] for k in d["after"]["kernels"]] == [
        "triad_fp64 [fp64->fp32]", "gemm_fp64_256 [fp64->fp32]", "softmax_fp32"]
    triad = d["moves"][0]
    assert triad["after_s"] == pytest.approx((20e-3 - 5e-6) / 2 + 5e-6)   # 10.0025 ms
    assert triad["before_work_floor_s"] == pytest.approx(2.4e8 / 2.039e12, 1e-4)
    assert triad["after_work_floor_s"] == pytest.approx(1.2e8 / 2.039e12, 1e-4)


def test_only_names_the_old_kernel_and_renames_it_alone(tmp_path, capsys):
    d = _whatif(capsys, _file(tmp_path, ZOO), "--on", A100, "--precision", "fp32",
                "--only", "triad_fp64")
    assert [(m["kernel"], m["new_kernel"]) for m in d["moves"]] == [
        ("triad_fp64", "triad_fp64 [fp64->fp32]")]
    assert [k["name"] for k in d["after"]["kernels"]] == [
        "triad_fp64 [fp64->fp32]", "gemm_fp64_256", "softmax_fp32"]


def test_a_name_the_file_has_already_is_not_given_twice(tmp_path, capsys):
    kernels = [{"name": "gemm_fp16", "op": "matmul", "flop": {"fp16": 2e9},
                "bytes": {"DRAM": 6e6}, "seconds": 2e-5},
               {"name": "gemm_fp8", "op": "matmul", "flop": {"fp8": 2e9},
                "bytes": {"DRAM": 3e6}, "seconds": 1e-5}]
    d = _whatif(capsys, _file(tmp_path, kernels), "--on", "H100", "--precision", "fp8")
    # marked, the names no longer meet (s30 kept 'gemm_fp16' rather than a second gemm_fp8)
    assert [k["name"] for k in d["after"]["kernels"]] == ["gemm_fp16 [fp16->fp8]", "gemm_fp8"]
    kernels.append({**kernels[0], "name": "gemm_fp16 [fp16->fp8]"})
    d = _whatif(capsys, _file(tmp_path, kernels), "--on", "H100", "--precision", "fp8")
    assert [k["name"] for k in d["after"]["kernels"]][0] == "gemm_fp16"


def test_fp4_names_its_block_format(tmp_path, capsys):
    d = _whatif(capsys, _file(tmp_path, ZOO[:1]), "--on", "B200", "--precision", "nvfp4")
    assert d["moves"][0]["new_kernel"] == "triad_fp64 [fp64->nvfp4]"


def test_llm_step_names_say_no_dtype_and_stay(tmp_path, capsys):
    # README: rooflab llm tinyllama-1.1b --on A100 --json > d.json && rooflab whatif d.json
    # --on A100 --precision fp8: q_proj, gate_proj ... carry no dtype token
    capsys.readouterr()
    assert main(["llm", "tinyllama-1.1b", "--on", "A100", "--json"]) == 0
    path = tmp_path / "d.json"
    path.write_text(capsys.readouterr().out)
    d = _whatif(capsys, str(path), "--on", "A100", "--precision", "fp8")
    names = [m["kernel"] for m in d["moves"]]
    assert "q_proj" in names and "lm_head" in names and len(names) == 15
    assert all(m["new_kernel"] == m["kernel"] for m in d["moves"])


def test_a_renamed_whole_step_keeps_its_range_in_the_table(tmp_path, capsys, monkeypatch):
    # seed 004's decode step, one point of 15 ms with no launch count: its time after is a
    # range (the gap scaled with the work, or held), on the renamed row as on any other
    monkeypatch.setenv("COLUMNS", "200")
    kernels = [{"name": "decode_fp16 b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
                "seconds": 0.015},
               {"name": "rmsnorm_fp16", "flop": {"fp16": 2e6}, "bytes": {"DRAM": 4e6},
                "seconds": 1e-5}]
    capsys.readouterr()
    assert main(["whatif", _file(tmp_path, kernels), "--on", "H100", "--precision",
                 "fp8"]) == 0
    row = next(x for x in capsys.readouterr().out.splitlines() if "decode_fp16 b=1" in x)
    assert "decode_fp16 b=1 [fp16->fp8]" in row and "7.5 ms-14.7 ms" in row
    assert " -> decode" not in row


def test_change_precision_in_python_renames_too():
    roof = load_roof(A100)
    k = Kernel("triad_fp64", {"fp64": 2e7}, {"DRAM": 2.4e8}, seconds=2e-2)
    ((old, new),) = change_precision(roof, [k], "fp32").moves
    assert (old.name, new.name) == ("triad_fp64", "triad_fp64 [fp64->fp32]")
    assert new.bytes == {"DRAM": pytest.approx(1.2e8)}
