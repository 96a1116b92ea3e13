"""Review s33 F3: rocprof's "fp32 FLOP from FMA only" note named every kernel of the file,
gemm_mfma_bf16 too, whose SQ_INSTS_VALU_FMA_F32 is 0 (its FLOP are bf16 MFMA). The note now
names the kernels that did fp32 vector math, or that counted no FLOP at all.

tests/data/rocprof_occupancy/results.csv (README there), wave64:
  gemm_mfma_bf16  FMA_F32 0,          MFMA_MOPS_BF16 4,194,304 -> 512 x 4,194,304 = 2.147e9 bf16
  lds_transpose   FMA_F32 1,048,576   -> 64 lanes x 2 x 1,048,576 = 134,217,728 fp32 FLOP
  triad           FMA_F32 16,777,216  -> 64 x 2 x 16,777,216 = 2,147,483,648 fp32 FLOP
"""

from __future__ import annotations

from pathlib import Path

from rooflab.ingest.rocprof import load_rocprof

DATA = Path(__file__).parent / "data" / "rocprof_occupancy" / "results.csv"


def _fma_note(notes) -> str:
    (note,) = [n for n in notes if "fp32 FLOP from FMA only" in n]
    return note


def test_note_names_only_kernels_that_did_fp32_vector_math():
    imp = load_rocprof(str(DATA))
    flop = {k.name: k.flop for k in imp.kernels}
    assert flop["gemm_mfma_bf16"] == {"bf16": 512 * 4_194_304}
    assert flop["lds_transpose"] == {"fp32": 64 * 2 * 1_048_576}
    assert flop["triad"] == {"fp32": 64 * 2 * 16_777_216}
    note = _fma_note(imp.notes)
    # old: "gemm_mfma_bf16, lds_transpose, triad: fp32 FLOP from FMA only: ..."
    assert note.startswith("lds_transpose, triad: fp32 FLOP from FMA only: ")
    assert "gemm_mfma_bf16" not in note


def test_a_kernel_with_no_flop_counted_keeps_the_note(tmp_path):
    """FMA_F32 0 and MFMA 0: no FLOP at all, which the missing ADD/MUL/TRANS may explain."""
    lines = DATA.read_text().splitlines()
    head = lines[0].split(",")
    fma, mfma = head.index("SQ_INSTS_VALU_FMA_F32"), head.index("SQ_INSTS_VALU_MFMA_MOPS_BF16")
    # the gemm row, its quoted name holding one comma: split on the closing quote
    name, rest = lines[1].split('",', 1)
    cells = rest.split(",")
    shift = 2          # Index and the quoted KernelName are the first two columns
    cells[mfma - shift] = "0"
    assert cells[fma - shift] == "0"
    p = tmp_path / "results.csv"
    p.write_text("\n".join([lines[0], f'{name}",{",".join(cells)}', lines[3]]) + "\n")
    imp = load_rocprof(str(p))
    flop = {k.name: k.flop for k in imp.kernels}
    assert sum(flop["gemm_mfma_bf16"].values()) == 0 and flop["triad"] == {"fp32": 2_147_483_648}
    assert _fma_note(imp.notes).startswith("gemm_mfma_bf16, triad: fp32 FLOP from FMA only")
