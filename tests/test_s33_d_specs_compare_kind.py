"""`rooflab specs compare GPU cpu-profile.json` (review s33 D): a CPU probe's profile beside
a GPU's datasheet printed the ratio column as "measured / nominal" (T4: DRAM 4 %, memory
158 %, fp32 0 %), as if the file measured the T4. It measured another machine: the column
is now a plain first / second ratio and a note says why; a profile of the device itself
(`specs import --from T4`) keeps its measured / nominal percentages."""

from __future__ import annotations

from cli_inproc import json_of, run_cli
from profile_files import cpu_profile as _cpu_profile


def test_cpu_profile_beside_a_gpu_is_no_measured_share(tmp_path):
    me = _cpu_profile(tmp_path / "me.json")
    r = run_cli("specs", "compare", "t4", me)
    assert r.returncode == 0, r.stderr
    assert "measured / nominal" not in r.stdout
    # first / second: T4 DRAM 320 GB/s / 11.8 GB/s = 27.1 (not 11.8 / 320 = "4 %")
    dram = next(x for x in r.stdout.splitlines() if x.startswith("│ DRAM"))
    assert "27.1" in dram and "%" not in dram
    assert "was probed on a cpu and NVIDIA T4 is a gpu" in " ".join(r.stdout.split())


def test_cpu_profile_beside_a_gpu_json(tmp_path, capsys):
    me = _cpu_profile(tmp_path / "me.json")
    d = json_of(capsys, ["specs", "compare", "t4", me, "--json"])
    assert d["ratios"]["measured_over_nominal"] is False
    assert d["ratios"]["numerator"] == "NVIDIA T4"
    dram = next(r for r in d["ratios"]["rows"] if r["quantity"] == "DRAM")
    assert dram["ratio"] == 320e9 / 11.8e9
    assert any("probed on a cpu" in n for n in d["notes"])
    # a profile of the device itself (`specs import --from T4`) keeps measured / nominal:
    # 270 / 320 GB/s = 84 %
    t4p = tmp_path / "t4p.json"
    assert run_cli("specs", "import", "--from", "T4", "--dram", "270GB/s", "--fp16",
                   "50TFLOP/s@tensor", "-o", str(t4p)).returncode == 0
    d = json_of(capsys, ["specs", "compare", "t4", str(t4p), "--json"])
    assert d["ratios"]["measured_over_nominal"] is True
    dram = next(r for r in d["ratios"]["rows"] if r["quantity"] == "DRAM")
    assert dram["ratio"] == 270e9 / 320e9
    assert "notes" not in d
