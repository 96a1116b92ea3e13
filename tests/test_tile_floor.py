"""`ai matmul --tile --on`: the time floor at the quantized compute ceiling beside the plain
one, and the --on profile's host read through hardware/profile.py's loader.

Hand numbers:
- fp32 1000³ in 128x128 on an A100 (108 SMs, fp32 19.5 TFLOP/s, DRAM 2.039 TB/s): 2e9 FLOP,
  68e6 B. Plain floor max(2e9/19.5e12, 68e6/2.039e12) = max(102.6, 33.3) us = 103 us.
  Quantized P = 19.5e12 x 1e6/1048576 x 64/108 = 11.02e12: floor max(2e9/11.02e12, 33.3
  us) = 181.5 us (2e9 x 1048576 x 108 / (19.5e12 x 1e6 x 64)).
- fp16, same shape: 34e6 B / 2.039e12 = 16.7 us, memory-bound; 312e12 x 0.954 x 0.593 =
  176 TFLOP/s stays above the memory roof (2e9/176e12 = 11.4 us < 16.7): the same floor.
- fp16 256³ in 128x128 on a T4 (40 SMs, fp16 tensor 65 TFLOP/s, 320 GB/s, 5 us launch):
  4 tiles, 4/40 = 10 % of the SMs: 2·256³ / 6.5e12 = 5.16 us, above the 5 us launch floor
  that binds the plain 2.05 us work floor (655360 B / 320e9 = 2.048 us).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

A100_FP32_Q = 19.5e12 * (1e6 / 1048576) * (64 / 108)


def _run(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _json(capsys, argv):
    return json.loads(_run(capsys, [*argv, "--json"]))


A100_FP32 = ["ai", "matmul", "1000", "1000", "1000", "--tile", "128x128", "--dtype", "fp32",
             "--on", "a100"]


def test_compute_bound_floor_at_the_quantized_ceiling(capsys):
    d = _json(capsys, A100_FP32)
    t = d["tile_quantization"]
    assert d["work_floor_s"] == pytest.approx(2e9 / 19.5e12)        # unchanged: 103 us
    assert t["quantized_work_floor_s"] == pytest.approx(2e9 / A100_FP32_Q)
    assert t["quantized_work_floor_s"] == pytest.approx(181.48e-6, rel=1e-4)
    assert t["quantized_time_floor_s"] == t["quantized_work_floor_s"]   # 5 us launch below
    # the floor and the rate say the same thing: FLOP / quantized rate
    assert t["quantized_work_floor_s"] == pytest.approx(
        d["flop"] / t["quantized_attainable_flop_per_s"])
    out = _run(capsys, A100_FP32)
    assert ("  time floor  103 us  max(FLOP/P, bytes/B); 181 us at the quantized ceiling: "
            "max(FLOP/P_q, bytes/B), derived; one launch (5 us, nominal) is below both") in out


def test_memory_bound_floor_is_unchanged(capsys):
    argv = ["ai", "matmul", "1000", "1000", "1000", "--tile", "128x128", "--dtype", "fp16",
            "--on", "a100"]
    d = _json(capsys, argv)
    t = d["tile_quantization"]
    assert d["work_floor_s"] == pytest.approx(34e6 / 2.039e12, rel=1e-3)
    assert t["quantized_work_floor_s"] == pytest.approx(d["work_floor_s"])
    assert t["quantized_binding"] == "memory"
    out = _run(capsys, argv)
    assert "16.7 us  max(FLOP/P, bytes/B); the same at the quantized ceiling" in out


def test_quantized_floor_above_the_launch_floor(capsys):
    argv = ["ai", "matmul", "256", "256", "256", "--tile", "128x128", "--dtype", "fp16",
            "--on", "t4"]
    d = _json(capsys, argv)
    t = d["tile_quantization"]
    assert d["floor_binding"] == "launch" and d["time_floor_s"] == pytest.approx(5e-6)
    assert d["work_floor_s"] == pytest.approx(655360 / 320e9)
    q = 2 * 256**3 / (65e12 * 4 / 40)
    assert t["quantized_work_floor_s"] == pytest.approx(q)          # 5.16 us
    assert t["quantized_time_floor_s"] == pytest.approx(q)          # max(5.16, 5) us
    out = _run(capsys, argv)
    assert ("5 us (launch); work floor 2.05 us  max(FLOP/P, bytes/B); 5.16 us at the "
            "quantized ceiling: max(FLOP/P_q, bytes/B), derived, above the launch floor") in out


def test_model_floor_is_the_roofline_time_floor_with_p_lowered():
    from rooflab.model import tile_quantization as tq
    from rooflab.model.roofline import time_floor

    count = tq.tile_count(1000, 1000, 128, 128)
    waves = tq.wave_count(count.tiles, 108)
    got = tq.quantized_floor(2e9, 68e6, 19.5e12, 2.039e12, count, waves)
    assert got == pytest.approx(time_floor(2e9, 68e6, A100_FP32_Q, 2.039e12))
    assert got == pytest.approx(2e9 * 1048576 * 108 / (19.5e12 * 1e6 * 64))
    # memory side: 68e9 B at 2.039 TB/s (33.4 ms) is more than 2e9 / 11.02e12
    assert tq.quantized_floor(2e9, 68e9, 19.5e12, 2.039e12, count, waves) == \
        pytest.approx(68e9 / 2.039e12)


def test_no_loss_is_compute_bound_not_memory(capsys):
    # 1536 x 1152 in 128x128: 12 x 9 = 108 full tiles, one full wave on 108 SMs; fp32 AI
    # 31.5 > ridge 9.56: compute binds, nothing lost
    argv = ["ai", "matmul", "1536", "1152", "4096", "--tile", "128x128", "--dtype", "fp32",
            "--on", "a100"]
    d = _json(capsys, argv)
    t = d["tile_quantization"]
    assert t["useful_fraction"] == 1 and t["waves"]["efficiency"] == 1
    assert t["quantized_binding"] == "compute"
    assert t["quantized_work_floor_s"] == pytest.approx(d["work_floor_s"])
    out = _run(capsys, argv)
    assert "memory roof, which still binds" not in out
    assert "derived: no quantization loss (every tile full, every wave full)" in out


# --- the --on profile through the loader ---------------------------------------------------

def _profile(tmp_path, host, name="p.json"):
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.hardware.profile import MachineProfile, profile_to_dict

    d = profile_to_dict(MachineProfile(host={}, nominal=lookup_roof("l4")))
    d["host"] = host
    path = tmp_path / name
    path.write_text(json.dumps(d), encoding="utf-8")
    return path, d


@pytest.mark.parametrize("field, value, said", [
    ("compute_capability", 8.9, "field 'host.compute_capability' must be a string"),
    ("multiprocessors", "58", "field 'host.multiprocessors' must be a positive whole"),
    ("multiprocessors", 0, "field 'host.multiprocessors' must be a positive whole"),
    ("multiprocessors", True, "field 'host.multiprocessors' must be a positive whole"),
])
def test_bad_host_field_is_the_loaders_clear_error(capsys, tmp_path, field, value, said):
    host = {"name": "NVIDIA L4", "backend": "cuda", "multiprocessors": 58,
            "compute_capability": "8.9", field: value}
    path, _ = _profile(tmp_path, host)
    assert main(["ai", "matmul", "2048", "2048", "2048", "--tile", "128x128", "--on",
                 str(path)]) == 2
    err = capsys.readouterr().err
    assert said in err and str(path) in err and "Traceback" not in err


def test_demo_document_profile_gives_sms(capsys, tmp_path):
    _, prof = _profile(tmp_path, {"name": "NVIDIA L4", "backend": "cuda",
                                  "multiprocessors": 58, "compute_capability": "8.9"})
    demo = tmp_path / "demo.json"
    demo.write_text(json.dumps({"profile": prof}), encoding="utf-8")
    t = _json(capsys, ["ai", "matmul", "2048", "2048", "2048", "--tile", "128x128", "--on",
                       str(demo)])["tile_quantization"]
    assert t["waves"]["sms"] == 58 and t["waves"]["full_waves"] == 5   # 256 / 58 = 4.41
    assert t["on_chip"]["compute_capability"] == "8.9"


def test_profile_without_host_says_so(capsys, tmp_path):
    path, _ = _profile(tmp_path, None)
    t = _json(capsys, ["ai", "matmul", "2048", "2048", "2048", "--tile", "128x128", "--on",
                       str(path)])["tile_quantization"]
    assert "records no GPU backend" in t["waves_skipped"]
    assert "roof file" not in t["waves_skipped"]


def test_profile_in_file(tmp_path):
    from rooflab.errors import ParseError
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.hardware.profile import profile_in_file
    from rooflab.model.roof_schema import roof_to_dict

    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps(roof_to_dict(lookup_roof("l4"))), encoding="utf-8")
    assert profile_in_file(roof) is None
    good, _ = _profile(tmp_path, {"backend": "cuda", "multiprocessors": 58}, "good.json")
    assert profile_in_file(good).host["multiprocessors"] == 58
    bad, _ = _profile(tmp_path, {"backend": "cuda", "compute_capability": "sm_89"}, "bad.json")
    with pytest.raises(ParseError, match="host.compute_capability"):
        profile_in_file(bad)
