"""rooflab torch on mixed-precision traces (review r2 F1, F2): a 0-FLOP op of a precision no
FLOP-carrying op has (an int copy_, a bf16 cast) with no --on, and torch.autocast's re-dispatch
of addmm/mm/bmm/SDPA, counted in the dtypes that ran. Values by hand."""

from __future__ import annotations

import json

import pytest
from torch_trace_events import cpu_event as _event
from torch_trace_events import write_trace as _write

from rooflab.cli.main import main
from rooflab.ingest.torch_trace import load_torch_trace

F, BF = "float", "c10::BFloat16"


# --- F1: the envelope roof with a 0-FLOP op of a precision no FLOP-carrying op has ---------

def test_int_copy_beside_an_fp32_mm_gets_an_envelope_roof(tmp_path, capsys):
    events = [
        _event("aten::mm", 0, 100, [[64, 64], [64, 64]], [F, F]),
        # int32 clone: 4000 B read + 4000 B written, key ('int32', 'vector') has no FLOP
        _event("aten::copy_", 200, 10, [[1000], [1000], []], ["int", "int", "Scalar"],
               ["", "", "False"]),
    ]
    path = _write(tmp_path, events)
    assert main(["torch", path, "--json"]) == 0      # was KeyError ('int32', 'vector'), 70
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    data = json.loads(out)
    rows = {r["kernel"]: r for r in data["analysis"]}
    mm = rows["aten::mm [64x64, 64x64]"]
    # the mm set the fp32 ceiling: 2*64^3 FLOP in 100 us, at 100 % of it
    assert mm["achieved_flop_per_s"] == pytest.approx(2 * 64 ** 3 / 100e-6)
    assert mm["percent_of_roof"] == pytest.approx(100.0)
    cp = rows["aten::copy_ [1000, 1000]"]
    assert cp["flop"] == 0 and cp["bytes"] == 8000
    assert cp["achieved_bytes_per_s"] == pytest.approx(8000 / 10e-6)


# --- F2: autocast's re-dispatch ---------------------------------------------------------

def _autocast_addmm(ts, outer_dur=1000):
    """torch.addmm(b, x, w) under torch.autocast('cpu', bfloat16), as torch 2.13 records
    it: the outer addmm with fp32 inputs, its casts, the inner addmm with bf16 inputs."""
    shapes = [[1024], [256, 1024], [1024, 1024], [], []]
    scal = ["Scalar", "Scalar"]
    out = [_event("aten::addmm", ts, outer_dur, shapes, [F, F, F] + scal, ["", "", "", "1", "1"])]
    t = ts + 10
    for dims in ([1024, 1024], [256, 1024], [1024]):
        out += [_event("aten::to", t, 100, [dims, [], [], [], []],
                       [F, "Scalar", "Scalar", "Scalar", ""], ["", "15", "False", "False", ""]),
                _event("aten::copy_", t + 5, 90, [dims, dims, []], [BF, F, "Scalar"],
                       ["", "", "False"])]
        t += 110
    out.append(_event("aten::addmm", t, outer_dur - (t - ts) - 5, shapes, [BF, BF, BF] + scal,
                      ["", "", "", "1", "1"]))
    return out


def test_autocast_addmm_counts_the_inner_bf16_call_with_the_outer_time(tmp_path):
    events = _autocast_addmm(0) + _autocast_addmm(2000)
    imp = load_torch_trace(_write(tmp_path, events))
    assert len(imp.kernels) == 1      # the casts are inside the counted addmm, not rows
    k = imp.kernels[0]
    assert k.name == "aten::addmm [1024, 256x1024, 1024x1024]" and k.calls == 2
    # 2mnk, per call
    assert k.flop == {"bf16": 2 * 2 * 256 * 1024 * 1024}
    # bf16 bytes: 2 * (1024 + 256*1024 + 1024*1024 + 256*1024) = 3,147,776 per call (the
    # outer fp32 call's 6,295,552 was counted before)
    assert k.bytes == {"DRAM": 2 * 3_147_776}
    assert k.seconds == pytest.approx(2 * 1000e-6)     # the outer calls' time
    assert k.meta["dtypes"][:3] == [BF, BF, BF]
    note = next(n for n in imp.notes if n.startswith("autocast:"))
    assert "2 calls of aten::addmm" in note and "casts" in note


def test_direct_and_matmul_bmm_under_autocast_are_one_bf16_row(tmp_path):
    # torch.bmm(a, b) (outer fp32 bmm, inner bf16 bmm) and torch.matmul(a, b) (matmul at
    # the autocast level, its bmm in bf16): one shape, one dtype, one row
    s = [[8, 128, 64], [8, 64, 128]]
    events = [_event("aten::bmm", 0, 300, s, [F, F]),
              _event("aten::copy_", 10, 50, [s[0], s[0], []], [BF, F, "Scalar"]),
              _event("aten::bmm", 100, 150, s, [BF, BF]),
              _event("aten::matmul", 1000, 300, s, [BF, BF]),
              _event("aten::bmm", 1010, 200, s, [BF, BF])]
    imp = load_torch_trace(_write(tmp_path, events))
    bmm = [k for k in imp.kernels if k.meta["op"] == "bmm"]
    assert len(bmm) == 1 and bmm[0].name == "aten::bmm [8x128x64, 8x64x128]"
    assert bmm[0].calls == 2 and bmm[0].seconds == pytest.approx(500e-6)
    # per call 2 * 8*128*64*128 FLOP; bf16 bytes 2 * (65,536 + 65,536 + 131,072)
    assert bmm[0].flop == {"bf16": 2 * 2 * 8 * 128 * 64 * 128}
    assert bmm[0].bytes == {"DRAM": 2 * 524_288}


def test_same_dtype_nesting_is_not_called_autocast(tmp_path):
    s = [[64, 64], [64, 64]]
    events = [_event("aten::mm", 0, 100, s, [F, F]), _event("aten::mm", 10, 80, s, [F, F])]
    imp = load_torch_trace(_write(tmp_path, events))
    (k,) = imp.kernels
    assert k.calls == 1 and k.flop == {"fp32": 2 * 64 ** 3} and k.seconds == pytest.approx(1e-4)
    assert not any(n.startswith("autocast:") for n in imp.notes)


def test_real_autocast_profile_addmm_is_bf16(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    b, x, w = torch.randn(64), torch.randn(32, 128), torch.randn(128, 64)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        torch.addmm(b, x, w)   # warm-up
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            y = torch.addmm(b, x, w)
    assert y.dtype == torch.bfloat16
    path = str(tmp_path / "ac.json")
    prof.export_chrome_trace(path)
    k = next(k for k in load_torch_trace(path).kernels if k.meta["op"] == "addmm")
    assert k.flop == {"bf16": 2 * 32 * 128 * 64}
    # bf16: 2 * (64 + 32*128 + 128*64 + 32*64) = 28,800 (fp32 would be 57,600)
    assert k.bytes == {"DRAM": 28_800}
