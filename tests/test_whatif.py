"""What-ifs with expected numbers worked out by hand.

Roof A (no launch floor unless said): fp32 vector 1e12 FLOP/s, fp16 tensor 8e12, DRAM 1e11 B/s.
Prediction: new time = launch + max(FLOP / P, bytes / B) / (efficiency the kernel has now).
"""

import pytest

from rooflab.errors import InputError
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.whatif import (
    change_batch,
    change_precision,
    describe,
    fuse,
    move_hardware,
    quantize_weights,
)

COMPUTE = (Ceiling(1e12, precision="fp32", unit="vector"),
           Ceiling(8e12, precision="fp16", unit="tensor"))
ROOF = Roof("A", compute=COMPUTE, memory=(Ceiling(1e11, level="DRAM"),))


def test_change_precision_fp32_to_fp16():
    # fp32 elementwise: 1e9 FLOP, 8e9 B (AI 0.125): floor 8e9 / 1e11 = 0.08 s, measured
    # 0.16 s -> efficiency 0.5. In fp16: 4e9 B (AI 0.25), floor 0.04 s / 0.5 = 0.08 s: 2x.
    k = Kernel("scale", {"fp32": 1e9}, {"DRAM": 8e9}, seconds=0.16)
    w = change_precision(ROOF, [k], "fp16")
    new = w.moves[0][1]
    assert dict(new.flop) == {"fp16": 1e9} and new.bytes["DRAM"] == pytest.approx(4e9)
    assert new.seconds == pytest.approx(0.08)
    assert w.speedup == pytest.approx(2.0)
    assert w.after.points[0].ai == pytest.approx(0.25)
    assert new.provenance["seconds"] == "derived"


def test_quantize_weights_fp16_to_int4_moves_decode_ai_from_1_to_4():
    # Seed 004: decode batch 1 in fp16 has AI ~1 (2 FLOP per 2-byte weight); int4 weights
    # are 0.5 byte -> bytes / 4 -> AI 4. Floor 2.2e9 / 1e11 = 0.022 s, measured 0.044 s
    # (efficiency 0.5); after: 5.5e8 / 1e11 = 5.5e-3 s / 0.5 = 0.011 s: 4x.
    k = Kernel("decode", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.044,
               meta={"op": "gemv"})
    w = quantize_weights(ROOF, [k], "int4")
    assert w.after.points[0].ai == pytest.approx(4.0)
    assert w.moves[0][1].seconds == pytest.approx(0.011)
    # An elementwise kernel holds no weights: unchanged.
    e = Kernel("act", {"fp16": 1e6}, {"DRAM": 4e6}, seconds=1e-4, meta={"op": "silu"})
    w2 = quantize_weights(ROOF, [k, e], "int4")
    assert w2.moves[1][1].bytes["DRAM"] == 4e6


def test_fuse_three_elementwise_passes_cuts_bytes_threefold():
    roof = Roof("A", compute=COMPUTE, memory=(Ceiling(1e11, level="DRAM"),), overhead_s=5e-6)
    # Each pass: 1e6 FLOP, 4e6 B (floor 4e-5 s), run at 80 % plus a 5 us launch:
    # 5e-6 + 4e-5 / 0.8 = 5.5e-5 s. Three passes: 1.65e-4 s.
    ks = [Kernel(n, {"fp16": 1e6}, {"DRAM": 4e6}, seconds=5.5e-5) for n in ("a", "b", "c")]
    w = fuse(roof, ks, ["a", "b", "c"])
    fused = w.moves[0][1]
    # Fused: 3e6 FLOP, 4e6 B (the largest member), one launch, combined efficiency
    # (3 x 4e-5) / (3 x 5e-5) = 0.8: 5e-6 + 4e-5 / 0.8 = 5.5e-5 s.
    assert fused.name == "a+b+c" and fused.total_flop == pytest.approx(3e6)
    assert fused.bytes["DRAM"] == pytest.approx(4e6)
    assert fused.seconds == pytest.approx(5.5e-5)
    assert w.speedup == pytest.approx(3.0)            # bytes (and launches) cut 3-fold
    assert len(w.after.kernels) == 1 and len(w.moves) == 3


def test_fuse_needs_two_known_names():
    k = Kernel("a", {"fp32": 1.0}, {"DRAM": 1.0})
    with pytest.raises(InputError, match="at least two"):
        fuse(ROOF, [k], ["a"])
    with pytest.raises(InputError, match="no kernel named 'zz'"):
        fuse(ROOF, [k], ["a", "zz"])


def test_change_batch_decode():
    # All bytes are weights (a gemv): batch 8 -> FLOP x 8, bytes unchanged -> AI 8
    # (seed 004: decode AI ~ batch). Time still bytes-bound: 2.2e9 / 1e11 / 0.5 = 0.044 s,
    # so 8x the tokens in the same time.
    k = Kernel("decode", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.044, meta={"op": "gemv"})
    w = change_batch(ROOF, [k], 8)
    assert w.after.points[0].ai == pytest.approx(8.0)
    assert w.moves[0][1].seconds == pytest.approx(0.044)
    # With 2e9 of the 2.2e9 bytes weights (meta), the other 2e8 grow 8x:
    # bytes = 2e9 + 8 x 2e8 = 3.6e9; AI = 1.76e10 / 3.6e9 = 4.89 (saturates below b).
    k2 = k.with_(meta={"op": "gemv", "weight_bytes": 2e9})
    w2 = change_batch(ROOF, [k2], 8)
    assert w2.after.points[0].ai == pytest.approx(1.76e10 / 3.6e9)
    with pytest.raises(InputError):
        change_batch(ROOF, [k], 0)


def test_move_hardware():
    # Memory-bound at 50 % on A (floor 0.1 s, 0.2 s). B has twice the bandwidth:
    # 1e10 / 2e11 = 0.05 s / 0.5 = 0.1 s: 2x.
    other = Roof("B", compute=COMPUTE, memory=(Ceiling(2e11, level="DRAM"),))
    k = Kernel("s", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.2)
    w = move_hardware(ROOF, [k], other)
    assert w.after.roof.name == "B"
    assert w.moves[0][1].seconds == pytest.approx(0.1) and w.speedup == pytest.approx(2.0)
    d = describe(w)
    assert d["moves"][0]["speedup"] == pytest.approx(2.0)


def test_untimed_kernels_move_without_time():
    k = Kernel("c", {"fp32": 1e9}, {"DRAM": 8e9})
    w = change_precision(ROOF, [k], "fp16")
    assert w.moves[0][1].seconds is None and w.speedup is None
    assert w.after.points[0].ai == pytest.approx(0.25)


def test_cli_whatif(tmp_path, capsys):
    import json

    from rooflab.cli.main import main

    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps({"name": "A", "compute": [
        {"precision": "fp32", "unit": "vector", "flop_per_s": 1e12},
        {"precision": "fp16", "unit": "tensor", "flop_per_s": 8e12}],
        "memory": [{"level": "DRAM", "bytes_per_s": 1e11}]}))
    ks = tmp_path / "k.json"
    ks.write_text(json.dumps({"kernels": [
        {"name": "scale", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 8e9}, "seconds": 0.16}]}))
    # Same numbers as test_change_precision_fp32_to_fp16: 0.16 s -> 0.08 s.
    assert main(["whatif", str(ks), "--on", str(roof), "--precision", "fp16", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["speedup"] == pytest.approx(2.0)
    assert data["moves"][0]["after_s"] == pytest.approx(0.08)
    png = tmp_path / "moved.png"
    assert main(["whatif", str(ks), "--on", str(roof), "--precision", "fp16",
                 "-o", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["whatif", str(ks), "--on", str(roof)]) == 2      # no change given
    assert "give exactly one change" in capsys.readouterr().err


def test_quantize_with_group_scales_matches_llm_weights():
    # --group 128: one fp16 scale per 128 int4 weights, 0.5 + 2/128 = 0.515625 B (as llm
    # --weights int4 counts them): AI 2 / 0.515625 = 3.879, not the bare dtype's 4
    k = Kernel("decode", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.044,
               meta={"op": "gemv"})
    w = quantize_weights(ROOF, [k], "int4", group=128)
    assert w.after.points[0].ai == pytest.approx(2 / 0.515625)
    assert "one fp16 scale per 128 weights" in w.assumption
    bare = quantize_weights(ROOF, [k], "int4")
    assert "no group scales; --group 128 adds" in bare.assumption
    # fp8 weights have a per-tensor scale: --group changes nothing
    assert quantize_weights(ROOF, [k], "fp8", group=128).after.points[0].ai == pytest.approx(2)


def test_cli_group_needs_quantize_and_a_positive_size(tmp_path, capsys):
    from rooflab.cli.main import main

    f = tmp_path / "k.json"
    f.write_text('[{"name": "gemv", "flop": {"fp16": 2e9}, "bytes": {"DRAM": 2e9}, '
                 '"seconds": 0.04, "op": "gemv"}]')
    assert main(["whatif", str(f), "--on", "T4", "--batch", "4", "--group", "128"]) == 2
    assert "--group goes with --quantize" in capsys.readouterr().err
    assert main(["whatif", str(f), "--on", "T4", "--quantize", "int4", "--group", "0"]) == 2
    assert "--group must be >= 1" in capsys.readouterr().err
    assert main(["whatif", str(f), "--on", "T4", "--quantize", "int4", "--group", "128",
                 "--json"]) == 0
