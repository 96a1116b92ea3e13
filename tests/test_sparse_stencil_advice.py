"""Review 16a C, E, L4: a CSR SpMV and a 7-point Jacobi stencil get their own advice.

Hand numbers (review 16a, /tmp/r16a; roof q.json: fp64 vector 118 GFLOP/s, fp32 vector 236,
DRAM 42.6 GB/s, dispatch floor 645 ns; both kernels fp64, 20 calls):
- SpMV (CSR, n = 2e6 rows, 27 nnz/row, 20 sweeps): FLOP 2 x 54e6 x 20 = 2.16e9; bytes per
  sweep 12 x 54e6 (8 B value + 4 B int32 index) + 4 x 2e6 rowptr + 8 x 2e6 x + 8 x 2e6 y =
  688 MB, 1.376e10 over 20; 0.604588 s; AI 0.157. The matrix (values + indices + rowptr,
  656 MB a sweep) is read once whatever runs next to it: fusion keeps at most x and y
  (32 MB), half of them as the advice assumes: 688 / 672 = 1.024x < 1.05, no fusion line
  (was 2.00x). fp32: values and vectors halve, indices do not: 8 x 54e6 + 4 x 54e6 +
  8e6 + 8e6 + 8e6 = 456 MB, 688 / 456 = 1.509x (was 2.00x). 8 right-hand sides per matrix
  read: 8 x 688 / (656 + 8 x 32) = 5504 / 912 = 6.035x per vector (was "batching cannot").
- Stencil (7-point Jacobi, N = 256, 20 sweeps): 254^3 x 20 = 3.2774e8 points, FLOP
  2.62193e9, DRAM 7.865791e9 B (24 B/point: one load, one store and its write-allocate
  read), 0.754704 s. Non-temporal stores: 24 -> 16 B/point, 1.5x; temporal blocking of 4
  sweeps: bytes / 4, AI 0.333 -> 1.33 (< ridge 2.76, so still memory-bound): 4.0x; the
  layer condition already holds at 24 B/point, so no spatial blocking; at 40 B/point
  (planes re-read) spatial blocking gives 40 / 24 = 1.667x.
Each speed-up is (measured time) / (launch floor + new work at the same efficiency); the
20 x 645 ns launch floor is 13 us of 0.6-0.75 s, so the ratios above hold to 1e-4.
"""

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice_fusion import activation_share
from rooflab.model.advice_sparse import sparse_bytes, sparse_bytes_ratio
from rooflab.model.diagnose import diagnose
from rooflab.model.machine import machine_of
from rooflab.model.opkind import is_sparse, is_stencil, is_streaming, kind_from_name

EPYC = Roof("AMD EPYC measured (2 threads)", kind="measured",
            compute=(Ceiling(118e9, precision="fp64", unit="vector"),
                     Ceiling(236e9, precision="fp32", unit="vector")),
            memory=(Ceiling(596e9, level="L1"), Ceiling(234e9, level="L2"),
                    Ceiling(194e9, level="L3"), Ceiling(42.6e9, level="DRAM")),
            overhead_s=645e-9)
H100 = Roof("H100 SXM", compute=(Ceiling(67e12, precision="fp64", unit="tensor"),),
            memory=(Ceiling(3.35e12, level="DRAM"),), overhead_s=5e-6)

SPMV = Kernel("spmv_csr_27", {"fp64": 2.16e9}, {"DRAM": 1.376e10}, seconds=0.604588,
              calls=20)
JACOBI = Kernel("jacobi7_256", {"fp64": 2.62193e9}, {"DRAM": 7.865791e9},
                seconds=0.754704, calls=20)
POINTS = 254 ** 3 * 20


def _diag(kernel, roof=EPYC):
    machine = machine_of(roof, kind="gpu" if roof is H100 else "cpu")
    return diagnose(analyze(roof, [kernel]), machine=machine)[0]


def _advice(d):
    return {a.action: a for a in d.advice}


def _find(d, start):
    return next((a for a in d.advice if a.action.startswith(start)), None)


def _slope(d):
    return next(x.words for x in d.distances if x.name == "along slope")


# --- kinds ------------------------------------------------------------------------------

@pytest.mark.parametrize("name,kind", [("spmv_csr_27", "spmv"), ("csr_matvec", "spmv"),
                                       ("jacobi7_256", "stencil"), ("heat3d", "stencil"),
                                       ("laplace_2d", "stencil"), ("7pt_box", "stencil"),
                                       ("gauss_seidel_rb", "stencil"),
                                       ("elementwise_add", "elementwise"), ("shell", "")])
def test_names_say_spmv_or_stencil(name, kind):
    assert kind_from_name(name) == kind


@pytest.mark.parametrize("kind", ["spmv", "csr", "csc", "ell", "sparse", "spmm"])
def test_sparse_kinds(kind):
    assert is_sparse(kind) and not is_stencil(kind) and not is_streaming(kind)


@pytest.mark.parametrize("kind", ["stencil", "jacobi", "laplace", "heat", "gauss_seidel",
                                  "fdtd", "3pt", "5pt", "7pt", "27pt"])
def test_stencil_kinds(kind):
    assert is_stencil(kind) and not is_sparse(kind) and not is_streaming(kind)


# --- SpMV ---------------------------------------------------------------------------------

def test_spmv_matrix_share_from_the_csr_model():
    split = sparse_bytes(SPMV, "fp64")
    # matrix 656 MB of 688 a sweep, values 432 MB
    assert split.matrix == pytest.approx(656 / 688, rel=1e-9)
    assert split.values == pytest.approx(432 / 688, rel=1e-9)
    assert "2e+06 rows per call" in split.source
    assert activation_share(SPMV, "spmv") == pytest.approx(32 / 688, rel=1e-9)


def test_spmv_gets_no_fusion_line():
    d = _diag(SPMV)
    assert _find(d, "fuse") is None                                   # was 2.00x


def test_spmv_fp32_keeps_its_int32_indices():
    fp32 = _advice(_diag(SPMV))["use fp32 instead of fp64"]
    assert fp32.speedup == pytest.approx(688 / 456, rel=1e-4)          # 1.509x, was 2.00x
    assert "integer indices" in fp32.assumption
    # the same rule for whatif --precision (its helper): 456 / 688 of the bytes
    assert sparse_bytes_ratio(SPMV, 8, 4) == pytest.approx(456 / 688, rel=1e-9)


def test_spmv_batches_right_hand_sides_per_matrix_read():
    d = _diag(SPMV)
    spmm = _find(d, "multiply 8 right-hand sides")
    assert spmm is not None                                           # was "batching cannot"
    assert spmm.speedup == pytest.approx(5504 / 912, rel=1e-4)          # 6.035x per vector
    assert "per vector (throughput)" in spmm.detail
    words = _slope(d)
    assert "tiling and batching cannot" not in words
    assert "right-hand sides per matrix read" in words
    assert _find(d, "block for cache") is None


def test_spmv_meta_from_ai_spmv_gives_the_same_numbers():
    # `rooflab ai spmv` writes read_only_bytes (values + indices + rowptr) and index_bytes
    # (indices + rowptr), both totals: 20 x 656 MB and 20 x (216 + 8) MB
    k = SPMV.with_(name="a", meta={"op": "spmv", "read_only_bytes": 20 * 656e6,
                                   "index_bytes": 20 * 224e6})
    got = _advice(_diag(k))
    assert got["use fp32 instead of fp64"].speedup == pytest.approx(688 / 456, rel=1e-4)
    spmm = _find(_diag(k), "multiply 8")
    assert spmm.speedup == pytest.approx(5504 / 912, rel=1e-4)
    assert "read off the name" not in spmm.assumption


def test_spmv_is_not_told_unit_stride():
    d = _diag(SPMV)
    assert not any("unit stride" in a.action for a in d.advice)        # review 16a L4
    access = _find(d, "stream the matrix on every core")
    # 53 % of roof -> 80 %: 0.8 / 0.5343
    assert access.speedup == pytest.approx(0.8 / (1.376e10 / 42.6e9 / (0.604588 - 20 * 645e-9)),
                                           rel=1e-3)
    below = next(x.words for x in d.distances if x.name == "below roof")
    assert "unit-stride" not in below and "gather" in below


# --- stencil ------------------------------------------------------------------------------

def test_stencil_gets_nontemporal_stores():
    nt = _find(_diag(JACOBI), "use non-temporal")
    assert nt is not None                                              # was never offered
    assert nt.speedup == pytest.approx(1.5, rel=1e-4)                  # 24 -> 16 B/point
    assert "one load and one store per point assumed" in nt.assumption


def test_stencil_nontemporal_ratio_from_its_split():
    # two arrays read, one written (R = 2W): R + 2W = 4 -> R + W = 3 units: 1.333x
    w = 8.0 * POINTS
    k = JACOBI.with_(meta={"op": "stencil", "bytes_split": {"read": 2 * w, "write": w}})
    assert _find(_diag(k), "use non-temporal").speedup == pytest.approx(4 / 3, rel=1e-4)


def test_stencil_temporal_blocking_and_no_tiling_cannot():
    d = _diag(JACOBI)
    tb = _find(d, "block 4 sweeps in time")
    assert tb is not None
    assert tb.new_ai == pytest.approx(4 * 2.62193e9 / 7.865791e9)      # 0.333 -> 1.33
    assert tb.speedup == pytest.approx(4.0, rel=1e-3)
    words = _slope(d)
    assert "cannot" not in words                                       # was "tiling ... cannot"
    assert "layer condition" in words and "Temporal blocking" in words
    assert _find(d, "fuse with the neighbouring pass") is None         # its sweeps: above


def test_stencil_spatial_blocking_only_when_the_layer_condition_breaks():
    shape = {"updated_points": POINTS, "sweeps": 20}
    held = JACOBI.with_(meta={"op": "stencil", "shape": shape})
    assert _find(_diag(held), "block in space") is None                # 24 B/point already
    broken = held.with_(bytes={"DRAM": 40.0 * POINTS}, seconds=0.754704 * 40 / 24)
    sb = _find(_diag(broken), "block in space")
    assert sb is not None and "layer condition" in sb.detail
    assert sb.speedup == pytest.approx(40 / 24, rel=1e-3)


def test_no_nontemporal_stores_on_a_gpu():
    k = JACOBI.with_(seconds=7.865791e9 / 3.35e12 * 2)
    assert _find(_diag(k, H100), "use non-temporal") is None
    assert _find(_diag(k, H100), "block 4 sweeps") is not None


# --- an unknown kind ------------------------------------------------------------------------

def test_unknown_kind_under_1_flop_per_byte_is_said_unknown():
    k = SPMV.with_(name="loop_a")
    words = _slope(_diag(k))
    assert "each element is read and written once" not in words
    assert "op kind is unknown" in words and "meta.op" in words
    fuse = _find(_diag(k), "fuse with the neighbouring pass")
    assert "op kind is unknown" in fuse.assumption


def test_a_kind_rooflab_does_not_know_is_said_unknown_too():
    k = SPMV.with_(name="loop_b", meta={"op": "my_solver_step"})
    assert "op kind is unknown" in _slope(_diag(k))


@pytest.mark.parametrize("kind", ["dot", "axpy"])
def test_blas1_kinds_stream(kind):
    # `rooflab ai dot` / `ai axpy` name their kernels so: each element read once
    k = Kernel("v", {"fp64": 2e9}, {"DRAM": 1.6e10}, seconds=0.5, meta={"op": kind})
    assert is_streaming(kind)
    assert "tiling and batching cannot" in _slope(_diag(k))
