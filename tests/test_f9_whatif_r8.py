"""Review r8 (`rooflab whatif` / `choose` by hand), fixer f9: every number below is worked
by hand from the catalog's figures (T4: 320 GB/s, 5 us a launch; A100 80GB SXM: 2.039
TB/s, 19.5 TFLOP/s fp32, 5 us) or the r8 scratch profile (zen4: measured fp64 17.8 /
fp32 234 GFLOP/s, nominal 118 / 236).

- F1: a kernel timed faster than its roof keeps its measured-to-floor ratio: an identity
  change is 1.00x, half the bytes halve its work time (was: moved to its floor, 0.32x).
- F4: a fusion counts the launches of the members whose times held theirs only.
- F2: a conv, batched matmul or unknown kind has no weights under --batch / --quantize.
- F9/F6: the --precision cap per old precision, and on the widening side too.
- F5: a range's JSON ends low to high, named by which is the fast one.
- F3: --only with --hardware / --fuse refused; F7: choose names a device with no launch
  floor; F8: per-token line names its floor, notes grouped, no "100 %" for doubted kernels.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.model import Kernel
from rooflab.model.whatif import change_batch, fuse, move_hardware, scale_bytes
from rooflab.model.whatif_precision import change_precision
from rooflab.model.whatif_weights import quantize_weights, sparsify

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"
T4_BW, A100_BW, A100_FP32, LAUNCH = 320e9, 2.039e12, 19.5e12, 5e-6


def _k3():
    """r8's k3.json (fp16): every kernel but residual_add beats the T4's roof."""
    return [Kernel("gemv", {"fp16": 2e9}, {"DRAM": 2e9}, seconds=1.5e-3, calls=10),
            Kernel("gemm", {"fp16": 137438953472.0}, {"DRAM": 100663296.0}, seconds=0.7e-3),
            Kernel("residual_add", {"fp16": 1e6}, {"DRAM": 6e6}, seconds=0.6e-3, calls=100),
            Kernel("poly_eval", {"fp16": 1e11}, {"DRAM": 5e7}, seconds=2e-3, unit="vector",
                   meta={"op": "elementwise"})]   # as the file loader reads an elementwise op


def test_catalog_figures_the_hand_numbers_use():
    t4, a100 = load_roof("T4"), load_roof("A100")
    assert (t4.find_memory("DRAM").value, t4.overhead_s) == (T4_BW, LAUNCH)
    assert (a100.find_memory("DRAM").value, a100.overhead_s) == (A100_BW, LAUNCH)
    assert a100.find_compute("fp32", "vector").value == A100_FP32


# --- F1 ----------------------------------------------------------------------------------

def test_identity_changes_leave_kernels_above_their_roof_alone():
    t4 = load_roof("T4")
    for w in (scale_bytes(t4, _k3(), 1.0), move_hardware(t4, _k3(), load_roof("T4"))):
        for old, new in w.moves:
            assert new.seconds == pytest.approx(old.seconds, rel=1e-12), old.name
        assert w.speedup == pytest.approx(1.0)          # was 4.8 ms -> 15.2 ms, 0.32x


def test_half_the_bytes_of_a_gemv_above_its_roof_halves_its_work_time():
    # gemv: floor 2 GB / 320 GB/s = 6.25 ms, timed 1.5 ms with 10 x 5 us of launches, so
    # its work 1.45 ms beats the floor 4.31x; half the bytes: 50 us + 3.125 ms x 1.45 /
    # 6.25 = 775 us (the capped rule read 50 us + 3.125 ms = 3.175 ms, 0.47x)
    w = scale_bytes(load_roof("T4"), _k3(), 0.5, names=["gemv"])
    (_, new), = w.moves
    assert new.seconds == pytest.approx(50e-6 + 3.125e-3 * 1.45e-3 / 6.25e-3, rel=1e-9)
    assert new.seconds == pytest.approx(775e-6, rel=1e-3)


def test_sparsity_leaves_an_elementwise_kernel_above_its_roof_alone():
    # poly_eval: 100 GFLOP / 16.2 TFLOP/s fp16 vector = 6.17 ms, timed 2 ms (3.09x above)
    w = sparsify(load_roof("T4"), _k3())
    new = {o.name: n for o, n in w.moves}
    assert new["poly_eval"].seconds == pytest.approx(2e-3, rel=1e-12)   # was 6.18 ms


def test_whatif_cli_identity_reads_one_x(tmp_path, capsys):
    path = tmp_path / "k3.json"
    path.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": k.name, "flop": dict(k.flop), "bytes": dict(k.bytes), "seconds": k.seconds,
         "calls": k.calls, "meta": dict(k.meta)} for k in _k3()]}))
    assert main(["whatif", str(path), "--on", "T4", "--hardware", "T4", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["total_after_s"] == pytest.approx(4.8e-3) and d["speedup"] == pytest.approx(1.0)


# --- F4 ----------------------------------------------------------------------------------

def _k5():
    return [Kernel("gemm_small", {"fp32": 268e9}, {"DRAM": 1.2e9}, seconds=0.02, calls=10000),
            Kernel("bias_add", {"fp32": 1e8}, {"DRAM": 1.2e9}, seconds=1e-3, calls=1,
                   meta={"op": "add"}),
            Kernel("relu", {"fp32": 1e8}, {"DRAM": 0.8e9}, seconds=0.6e-3, calls=10000,
                   meta={"op": "relu"})]


def test_fusing_a_gpu_side_member_with_a_normal_one_adds_one_launch_not_10000():
    # gemm_small's 20 ms is under its 10000 x 5 us floor (GPU-side): its work is all 20 ms;
    # bias_add holds its one launch: work 995 us. Floors 268 GFLOP / 19.5 TFLOP/s and
    # 1.2 GB / 2.039 TB/s; combined efficiency their sum over 20.995 ms = 0.6827; the fused
    # kernel, compute-bound, 268.1 GFLOP / 19.5 TFLOP/s / 0.6827 + 1 x 5 us = 20.14 ms
    # (was + 10000 x 5 us = 70.1 ms, 0.30x)
    eff = (268e9 / A100_FP32 + 1.2e9 / A100_BW) / (0.02 + 1e-3 - LAUNCH)
    w = fuse(load_roof("A100"), _k5(), ["gemm_small", "bias_add"])
    new = w.moves[0][1]
    assert new.seconds == pytest.approx(LAUNCH + 268.1e9 / A100_FP32 / eff, rel=1e-9)
    assert new.seconds == pytest.approx(20.14e-3, rel=1e-3)
    assert 21e-3 / new.seconds > 1.0


def test_fusing_a_normal_member_with_a_gpu_side_one_counts_the_normal_ones_calls():
    # bias_add (1 call, held) + relu (10000 calls, 600 us: GPU-side): 1 x 5 us of launches
    # on top of the fused work at the members' combined efficiency (was 10000 x 5 us, 51 ms)
    w = fuse(load_roof("A100"), _k5(), ["bias_add", "relu"])
    new = w.moves[0][1]
    eff = (1.2e9 / A100_BW + 0.8e9 / A100_BW) / (1e-3 - LAUNCH + 0.6e-3)
    work = max(2e8 / A100_FP32, new.bytes["DRAM"] / A100_BW)
    assert new.seconds == pytest.approx(LAUNCH + work / eff, rel=1e-9)
    assert new.bytes["DRAM"] == pytest.approx(1.2e9 + 0.8e9 - 0.8e9)   # chain: one re-read
    assert new.seconds == pytest.approx(962e-6, rel=1e-3)


def test_a_fusion_of_members_above_their_roof_never_reads_slower():
    # two 1 GB adds at 100 us each on an A100 (floor 490 us: 4.9x above); fused, 1.5 GB
    # at 100 % of the roof is 736 us: held to the 200 us they took (was 0.27x)
    ks = [Kernel(n, {"fp32": 2.5e8}, {"DRAM": 1e9}, seconds=1e-4, meta={"op": "add"})
          for n in ("add_a", "add_b")]
    w = fuse(load_roof("A100"), ks, ["add_a", "add_b"])
    assert w.moves[0][1].seconds == pytest.approx(2e-4)
    assert w.speedup == pytest.approx(1.0)


# --- F2 ----------------------------------------------------------------------------------

def _conv():
    return [Kernel("conv2d_3x3", {"fp16": 1e10}, {"DRAM": 1e9}, seconds=1e-3),
            Kernel("layernorm", {"fp16": 5e7}, {"DRAM": 1e8}, seconds=1e-4)]


def test_batch_grows_a_convs_bytes_and_says_its_share():
    # conv: floor 1 GB / 2.039 TB/s = 490 us in 995 us of work (49.3 %); at batch 8 its
    # bytes are 8 GB: 5 us + 3.924 ms / 0.493 = 7.96 ms (was held at 1 ms as weights)
    w = change_batch(load_roof("A100"), _conv(), 8)
    new = {o.name: n for o, n in w.moves}["conv2d_3x3"]
    assert new.bytes["DRAM"] == pytest.approx(8e9)
    assert new.seconds == pytest.approx(LAUNCH + 8e9 / A100_BW * 995e-6 / (1e9 / A100_BW))
    assert new.seconds == pytest.approx(7.96e-3, rel=1e-3)
    assert "conv2d_3x3: weights 0 % of the bytes (its kind, conv" in w.assumption


def test_quantize_leaves_conv_bmm_and_unknown_kernels_alone():
    a100 = load_roof("A100")
    conv = {o.name: n for o, n in quantize_weights(a100, _conv(), "int8").moves}
    assert conv["conv2d_3x3"].seconds == pytest.approx(1e-3)          # was 503 us, 1.99x
    kb = [Kernel(n, {"fp16": 1e10}, {"DRAM": 4e8}, seconds=4e-4)
          for n in ("bmm_qk", "aten::bmm", "kernel_42")]
    w = quantize_weights(a100, kb, "int4")
    assert [n.bytes["DRAM"] for _, n in w.moves] == [4e8, 4e8, 4e8]
    # a plain GEMM keeps its weights: the rule changed only the kinds no split is known for
    gemm = Kernel("gemm", {"fp16": 1e10}, {"DRAM": 4e8}, seconds=4e-4)
    assert quantize_weights(a100, [gemm], "int4").moves[0][1].bytes["DRAM"] == 1e8
    # and 2:4 pruning leaves a batched matmul alone, as the quantize now does
    assert sparsify(a100, kb[:1]).moves[0][1].bytes["DRAM"] == 4e8


# --- F9 / F6 -----------------------------------------------------------------------------

ZEN4P = {"schema_version": 1, "host": {"name": "zen4 vm"},
         "nominal": {"name": "zen4", "kind": "nominal", "compute": [
             {"precision": "fp64", "unit": "vector", "flop_per_s": 118e9, "kind": "nominal"},
             {"precision": "fp32", "unit": "vector", "flop_per_s": 236e9, "kind": "nominal"}],
             "memory": [{"level": "DRAM", "bytes_per_s": 83.2e9, "kind": "nominal"}]},
         "measured": {"name": "zen4", "kind": "measured", "compute": [
             {"precision": "fp64", "unit": "vector", "flop_per_s": 17.8e9, "kind": "measured"},
             {"precision": "fp32", "unit": "vector", "flop_per_s": 234e9, "kind": "measured"}],
             "memory": [{"level": "DRAM", "bytes_per_s": 19.6e9, "kind": "measured"},
                        {"level": "DRAM (real traffic)", "bytes_per_s": 26.2e9,
                         "kind": "measured"}]}}
MM = 268435456.0   # 2 x 512^3


def _whatif_json(tmp_path, capsys, kernels, *args):
    prof, ks = tmp_path / "zen4p.json", tmp_path / "k.json"
    prof.write_text(json.dumps(ZEN4P))
    ks.write_text(json.dumps({"schema_version": 1, "kernels": kernels}))
    assert main(["whatif", str(ks), "--on", str(prof), *args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    return d, {m["kernel"]: m for m in d["moves"]}


def test_the_nominal_ratio_cap_holds_with_two_precisions_in_the_file(tmp_path, capsys):
    # dgemm: MM / 17.8 GFLOP/s = 15.08 ms of 20 ms (75.4 %); fp32 held to 2 x 17.8 = 35.6
    # GFLOP/s: 7.54 ms / 0.754 = 10 ms (2.00x; was 1.52 ms, 13.15x); mm_512, fp32 already,
    # keeps the measured 234 GFLOP/s: 3 ms -> 3 ms
    d, rows = _whatif_json(tmp_path, capsys, [
        {"name": "dgemm", "flop": {"fp64": MM}, "bytes": {"DRAM": 6291456}, "seconds": 0.02},
        {"name": "mm_512", "flop": {"fp32": MM}, "bytes": {"DRAM": 3145728}, "seconds": 0.003}],
        "--precision", "fp32")
    assert rows["dgemm"]["after_s"] == pytest.approx(0.01, rel=1e-9)
    assert rows["mm_512"]["after_s"] == pytest.approx(0.003, rel=1e-9)
    assert rows["dgemm"]["after_work_floor_s"] == pytest.approx(MM / 35.6e9, rel=1e-9)
    assert rows["mm_512"]["after_work_floor_s"] == pytest.approx(MM / 234e9, rel=1e-9)
    assert "dgemm (fp64): measured fp32/fp64 vector = 13.1x" in d["assumption"]   # 13.146


def test_a_widening_loses_at_most_the_nominal_ratio(tmp_path, capsys):
    # mm_512: MM / 234 GFLOP/s = 1.147 ms of 3 ms (38.2 %); fp64 held to 0.5 x 234 = 117
    # GFLOP/s: 2.294 ms / 0.382 = 6 ms (0.50x; was the probe's 17.8: 39.4 ms, 0.08x)
    d, rows = _whatif_json(tmp_path, capsys, [
        {"name": "mm_512", "flop": {"fp32": MM}, "bytes": {"DRAM": 3145728}, "seconds": 0.003},
        {"name": "jacobi", "flop": {"fp64": 1e9}, "bytes": {"DRAM": 8e9}, "seconds": 0.5}],
        "--precision", "fp64")
    assert rows["mm_512"]["after_s"] == pytest.approx(0.006, rel=1e-9)
    assert rows["jacobi"]["after_s"] == pytest.approx(0.5, rel=1e-9)
    assert "measured fp64/fp32 vector = 0.0761x" in d["assumption"]   # 3 figures under 0.1
    assert "117 GFLOP/s (derived)" in d["assumption"]


# --- F5 ----------------------------------------------------------------------------------

def test_a_batch_increase_range_is_low_to_high_and_names_the_slow_end(tmp_path, capsys):
    # seed 004's step + 2 GB of weights at batch 64: 14.8 GB / 270 GB/s = 54.81 ms;
    # scaled 54.81 / 0.5434 + 5 us = 100.9 ms, held 54.81 + 6.847 + 0.005 = 61.67 ms
    step = tmp_path / "stepw.json"
    step.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
         "seconds": 0.015, "meta": {"weight_bytes": 2e9}}]}))
    assert main(["whatif", str(step), "--on", str(SEEDS / "t4p.json"), "--batch", "64",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    floor = 14.8e9 / 270e9
    eff = (2.2e9 / 270e9) / (0.015 - LAUNCH)
    held = floor + (0.015 - LAUNCH - 2.2e9 / 270e9) + LAUNCH
    assert d["total_after_s"] == pytest.approx(floor / eff + LAUNCH, rel=1e-9)
    assert d["total_after_s_range"] == pytest.approx([held, floor / eff + LAUNCH], rel=1e-9)
    assert "slow (high)" in d["total_after_s_is"]
    assert d["moves"][0]["after_s_range"] == pytest.approx(d["total_after_s_range"])


# --- F3, F7, F8 --------------------------------------------------------------------------

def test_only_with_hardware_or_fuse_is_refused(tmp_path, capsys):
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "a", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e9}, "seconds": 1e-3},
        {"name": "b", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e9}, "seconds": 1e-3}]}))
    for change in (["--hardware", "H100 SXM"], ["--fuse", "a,b"]):
        assert main(["whatif", str(path), "--on", "T4", *change, "--only", "a"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --only does not apply to") and err.count("\n") == 1


def test_choose_says_a_cpu_has_no_launch_floor(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    step = tmp_path / "step311.json"
    step.write_text(json.dumps({"kernels": [
        {"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
         "seconds": 0.015, "calls": 311}]}))
    assert main(["choose", str(step), "--among", "T4,A100,AMD EPYC 9654"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("no launch floor: AMD EPYC 9654 gives none (the catalog has no dispatch cost "
            "for it), so its time with launches is the work floor alone, not charged the "
            "311 launches the others are") in out
    assert main(["choose", str(step), "--among", "T4,A100"]) == 0
    assert "no launch floor" not in capsys.readouterr().out


def test_missing_ceiling_notes_are_said_once_with_their_kernels(tmp_path, capsys,
                                                                  monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": n, "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e9}, "seconds": 5e-3}
        for n in ("k1", "k2", "k3")]}))
    assert main(["whatif", str(path), "--on", "T4", "--precision", "bf16"]) == 0
    notes = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("note:")]
    # one note for the three kernels; the T4's bf16 stand-in is fp32 vector (Turing has no
    # bf16 math), and the note says why
    assert notes == ["note: 3 kernels (k1, k2, k3): roof 'NVIDIA T4' has no bf16 ceiling; "
                     "using fp32 vector (without bf16 math bf16 runs at the fp32 rate: "
                     "these tensor cores do fp16 only; cast to fp16 for the fp16 tensor "
                     "ceiling)"]


def test_per_token_line_of_an_untimed_step_names_its_floor(tmp_path, capsys, monkeypatch):
    # an untimed GEMV of 311 calls: work floor 1 GB / 2.039 TB/s = 490.4 us;
    # with launches max(490 us, 311 x 5 us) = 1.555 ms
    monkeypatch.setenv("COLUMNS", "250")
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "gemv", "flop": {"fp16": 1e9}, "bytes": {"DRAM": 1e9}, "calls": 311}]}))
    assert main(["whatif", str(path), "--on", "A100", "--batch", "8"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # batch 8: FLOP x 8, bytes (all weights) held: work floor 490.4 us -> 490.4 us, per
    # token 490 us -> 61.3 us; with launches 1.555 ms -> 1.555 ms, per token 194 us, 8.00x
    assert ("per token on the work floor (batch 1 -> 8 sequences per step): 490 us -> "
            "61.3 us, 8.00x the tokens/s; with launches 1.56 ms -> 194 us, 8.00x") in out


def test_read_with_care_no_longer_says_100_percent():
    from rooflab.model.whatif_warnings import move_warnings

    (line,) = move_warnings(scale_bytes(load_roof("T4"), _k3(), 1.0))
    assert "100 %" not in line and "caps, not predictions" not in line
    assert "each keeps the ratio of its measured time to its floor" in line


def test_change_precision_without_caps_is_unchanged_by_the_per_precision_roofs():
    t4 = load_roof("T4")
    w = change_precision(t4, _k3(), "fp16")    # fp16 -> fp16 on a catalog roof: identity
    assert w.move_roofs == () and w.speedup == pytest.approx(1.0)
