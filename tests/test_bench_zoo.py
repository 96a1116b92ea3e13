"""The zoo's kernels compute what they claim, run on numpy and torch-cpu, and the floor
check flags what is impossible."""

from __future__ import annotations

import numpy as np
import pytest
from zoo_clock import TINY, TickClock

from rooflab.bench import kernels as impl
from rooflab.bench import zoo
from rooflab.bench.check import check_floors, floor_flags, tolerance
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel


def roof(dram: float = 1e10, fp64: float = 1e11, spread: tuple[float, ...] = ()) -> Roof:
    return Roof(name="test", kind="measured",
                compute=(Ceiling(fp64, precision="fp64", unit="vector", provenance="measured"),
                         Ceiling(2 * fp64, precision="fp32", unit="vector",
                                 provenance="measured")),
                memory=(Ceiling(dram, level="DRAM", provenance="measured", samples=spread),))


# --- the numpy implementations compute the right thing --------------------------------------

def test_numpy_streaming_kernels_compute_their_formula():
    n = 100_000
    a, b, c = (impl.rand(n, "fp64", s) for s in range(3))
    np.testing.assert_array_equal(impl.np_copy(n, "fp64")(), a)
    np.testing.assert_allclose(impl.np_scale(n, "fp64")(), 3 * a)
    np.testing.assert_allclose(impl.np_add(n, "fp64")(), a + b)
    np.testing.assert_allclose(impl.np_triad(n, "fp64")(), b + 3 * c)    # blocked, one result
    assert impl.np_sum(n, "fp64")() == pytest.approx(a.sum())
    assert impl.np_dot(n, "fp64")() == pytest.approx(a @ b)
    np.testing.assert_allclose(impl.np_exp(n, "fp32")(), np.exp(impl.rand(n, "fp32")),
                               rtol=1e-6)
    np.testing.assert_array_equal(impl.np_sort(n, "fp64")(), np.sort(a))
    x = impl.rand(n, "fp64") + 1j * impl.rand(n, "fp64", 1)
    np.testing.assert_allclose(impl.np_fft(n)(), np.fft.fft(x))


def test_numpy_matrix_and_row_kernels_compute_their_formula():
    a, b = impl.rand((48, 40), "fp64"), impl.rand((40, 24), "fp64", 1)
    np.testing.assert_allclose(impl.np_gemm(48, 24, 40, "fp64")(), a @ b)
    x = impl.rand((50, 300), "fp32")
    y = impl.np_softmax(50, 300, "fp32")()
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, ref / ref.sum(1, keepdims=True), rtol=1e-5)
    g, bt = impl.rand(300, "fp32", 1), impl.rand(300, "fp32", 2)
    ln = impl.np_layernorm(50, 300, "fp32")()
    norm = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln, norm * g + bt, rtol=1e-4, atol=1e-5)


def test_numpy_conv2d_matches_torch():
    torch = pytest.importorskip("torch")
    x, w = impl.rand((2, 3, 9, 9), "fp32"), impl.rand((5, 3, 3, 3), "fp32", 1)
    got = impl.np_conv2d(2, 3, 9, 9, 5, 3, 3, 1, "fp32")()
    ref = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1)
    np.testing.assert_allclose(got, ref.numpy(), rtol=1e-5)


# --- run_zoo -------------------------------------------------------------------------------

def test_run_zoo_numpy_small_with_a_ticking_clock():
    ks = zoo.run_zoo(None, ["triad_fp64", "gemm"], plan=TINY, small=True, clock=TickClock())
    assert [k.name for k in ks] == ["triad_fp64", "gemm_fp64_64", "gemm_fp32_128"]
    triad = ks[0]
    n = zoo._stream_elements(8, small=True)
    assert dict(triad.flop) == {"fp64": 2 * n} and dict(triad.bytes) == {"DRAM": 24 * n}
    assert triad.seconds == pytest.approx(1e-3) and len(triad.samples) == 3
    assert dict(triad.provenance) == {"flop": "derived", "bytes": "derived",
                                      "seconds": "measured"}
    assert triad.meta["backend"] == "numpy" and "one thread" in triad.meta["note"]
    assert triad.meta["best_s"] == pytest.approx(1e-3)


def test_run_zoo_reports_progress_and_checks_floors():
    seen = []
    # DRAM 1e8 B/s: triad's 393 kB floor is 3.9 ms, and it "ran" in 1 ms: impossible.
    ks = zoo.run_zoo(roof(dram=1e8), ["triad_fp64", "gemm_fp64_64"], plan=TINY, small=True,
                     clock=TickClock(), progress=lambda s, f: seen.append((s, f)))
    assert seen[0] == ("triad_fp64", 0.0) and seen[-1] == ("done", 1.0)
    triad, gemm = ks
    assert triad.meta["floor_s"] == pytest.approx(24 * (1 << 14) / 1e8)
    assert triad.meta["floor_ratio"] == pytest.approx(1e-3 / (24 * (1 << 14) / 1e8))
    assert "below-floor" in triad.meta["flags"]
    # gemm 64 fp64: floor = max(524288 / 1e11, 98304 / 1e8) = 0.98 ms < 1 ms: no flag
    assert gemm.meta["floor_ratio"] == pytest.approx(1e-3 / (98304 / 1e8))
    assert "below-floor" not in gemm.meta["flags"]


def test_run_zoo_torch_cpu_runs_every_kernel():
    pytest.importorskip("torch")
    ks = zoo.run_zoo(None, None, device="torch-cpu", plan=TINY, small=True, clock=TickClock())
    assert [k.name for k in ks] == list(zoo.kernel_names(small=True))
    assert {k.meta["backend"] for k in ks} == {"torch-cpu"}
    assert all(k.seconds == pytest.approx(1e-3) for k in ks)


def test_run_zoo_rejects_unknown_devices():
    from rooflab.errors import InputError

    with pytest.raises(InputError, match="device must be cpu, torch-cpu or cuda"):
        zoo.run_zoo(None, ["copy"], device="tpu", small=True)


# --- the floor check -----------------------------------------------------------------------

def kernel(seconds: float, iqr: float = 0.0, ws: float = 1e9, name: str = "k") -> Kernel:
    return Kernel(name, flop={"fp64": 1e6}, bytes={"DRAM": 1e8}, seconds=seconds,
                  meta={"iqr_rel": iqr, "working_set_bytes": ws, "best_s": seconds * 0.9})


def test_floor_check_flags_only_beyond_the_noise():
    r = roof(dram=1e10)                              # floor = 1e8 / 1e10 = 10 ms
    ok, fast = kernel(9.7e-3, name="ok"), kernel(8e-3, name="fast")
    noisy_fast = kernel(8e-3, iqr=0.3, name="noisy")
    out = check_floors(r, (ok, fast, noisy_fast), llc=32 * 2**20)
    assert out[0].meta["flags"] == []                # 3 % under: within the 5 % tolerance
    assert out[1].meta["flags"] == ["below-floor"]   # 20 % under the floor
    assert out[1].meta["best_floor_ratio"] == pytest.approx(0.72)
    assert out[2].meta["flags"] == ["noisy"]         # 20 % under, but IQR is 30 %
    assert out[2].meta["floor_tolerance"] == pytest.approx(0.3)


def test_a_roof_measured_too_low_is_flagged_whatever_its_spread():
    r = roof(dram=1e10, spread=(0.5e10, 1e10))       # the roof's own samples span 67 %
    k = kernel(8.5e-3)                               # 15 % under the 10 ms floor
    p = analyze(r, [k]).primary()[0]
    assert tolerance(k) == pytest.approx(0.05)
    assert floor_flags(k, p, tolerance(k), None) == ("below-floor",)


def test_cache_resident_working_sets_are_flagged_where_dram_binds():
    memory_side = kernel(1e-2, ws=1e6)                                  # AI 0.01
    compute_side = Kernel("c", flop={"fp64": 1e10}, bytes={"DRAM": 1e6}, seconds=1.0,
                          meta={"working_set_bytes": 1e6})              # AI 1e4
    out = check_floors(roof(), (memory_side, compute_side), llc=32 * 2**20)
    assert out[0].meta["flags"] == ["cache-resident"]
    assert out[1].meta["flags"] == []


def test_cuda_without_a_gpu_is_a_device_error():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible")
    from rooflab.errors import DeviceError

    with pytest.raises(DeviceError, match="no CUDA device is visible for 'cuda:0'"):
        zoo.run_zoo(None, ["copy"], device="cuda:0", small=True)
