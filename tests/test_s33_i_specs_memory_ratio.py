"""`rooflab specs compare t4 me.json` of a CPU profile (review s33 I): the memory row's
ratio divided the T4's 16 GB of GPU memory by the host's 25.3 GB of RAM (0.632), two
different things. Beside a device of another kind the memory ratio is left out, as it
was beside a catalog CPU; a GPU profile beside a GPU keeps it."""

from __future__ import annotations

import json

from cli_inproc import json_of, run_cli
from profile_files import cpu_profile as _cpu_profile


def _row(out: str, head: str) -> list[str]:
    line = next(x for x in out.splitlines() if x.startswith(f"│ {head} "))
    return [c.strip() for c in line.strip("│").split("│")]


def test_no_memory_ratio_of_gpu_memory_over_host_ram(tmp_path):
    me = _cpu_profile(tmp_path / "me.json")
    r = run_cli("specs", "compare", "t4", me)
    assert r.returncode == 0, r.stderr
    # the sizes are shown; the ratio cell (old: 16 / 25.3 = 0.632) is empty
    assert _row(r.stdout, "memory") == ["memory", "16 GB", "25.3 GB", ""]
    assert _row(r.stdout, "DRAM")[-1] == "27.1"    # 320 / 11.8 GB/s: still divided


def test_no_memory_ratio_in_json(tmp_path, capsys):
    me = _cpu_profile(tmp_path / "me.json")
    d = json_of(capsys, ["specs", "compare", "t4", me, "--json"])
    assert "memory" not in [r["quantity"] for r in d["ratios"]["rows"]]
    # a GPU probe's profile (backend cuda) whose device reports 15.0 GB: beside the T4's
    # 16 GB datasheet the memory row is still divided, 15 / 16 = 0.9375
    doc = {"schema_version": 2,
           "host": {"backend": "cuda", "memory_bytes": 15.0e9},
           "measured": {"name": "T4 measured", "kind": "measured",
                        "compute": [{"precision": "fp16", "unit": "tensor",
                                     "flop_per_s": 50e12}],
                        "memory": [{"level": "DRAM", "bytes_per_s": 270e9}]}}
    gp = tmp_path / "gpu.json"
    gp.write_text(json.dumps(doc))
    d = json_of(capsys, ["specs", "compare", "t4", str(gp), "--json"])
    mem = next(r for r in d["ratios"]["rows"] if r["quantity"] == "memory")
    assert mem["ratio"] == 15.0e9 / 16e9
