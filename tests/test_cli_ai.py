"""rooflab ai: text and JSON output, --on with a profile file and a catalog name, errors."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cli_inproc import json_of as _json

from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile, save_profile
from rooflab.model import Ceiling, Roof


def test_matmul_json_seed_numbers(capsys):
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "fp16", "--json"])
    assert d["flop"] == 2 * 4096**3 and d["bytes"] == 3 * 4096**2 * 2
    assert d["ai"] == pytest.approx(1365.333, abs=1e-3)
    assert d["byte_model"].startswith("compulsory")
    (k,) = d["kernels"]
    assert k["flop"] == {"fp16": 2 * 4096**3} and k["bytes"] == {"DRAM": 3 * 4096**2 * 2}
    assert k["unit"] == "tensor" and k["provenance"]["flop"] == "derived"
    assert "roof" not in d


def test_text_output_states_byte_model(capsys):
    assert main(["ai", "elementwise", "1e8", "--inputs", "2"]) == 0
    out = capsys.readouterr().out
    assert "0.167 FLOP/byte" in out and "byte model  compulsory" in out
    assert "read 400 MB, write 200 MB" in out


def test_on_profile_file(tmp_path, capsys):
    # Seed 004's measured T4: 50 TFLOP/s fp16 tensor, 270 GB/s → ridge 185.
    measured = Roof("T4", "measured",
                    compute=(Ceiling(50e12, precision="fp16", unit="tensor",
                                     provenance="measured"),),
                    memory=(Ceiling(270e9, level="DRAM", provenance="measured"),))
    path = tmp_path / "t4.json"
    save_profile(path, MachineProfile(host={"name": "T4"}, measured=measured))
    d = _json(capsys, ["ai", "gemv", "2048", "2048", "--on", str(path), "--json"])
    assert d["roof"]["kind"] == "measured"
    assert d["ridge"] == pytest.approx(185.19, rel=1e-4)
    assert d["bound"] == "memory"
    assert d["attainable_flop_per_s"] == pytest.approx(270e9 * d["ai"])
    assert d["time_floor_s"] == pytest.approx(d["bytes"] / 270e9)   # 31 µs (seed 004: q_proj)
    assert d["time_floor_s"] == pytest.approx(31e-6, rel=0.02)
    assert main(["ai", "matmul", "4096", "4096", "4096", "--on", str(path)]) == 0
    out = capsys.readouterr().out
    assert "bound       compute" in out and "ridge       185" in out
    assert "time floor  2.75 ms" in out   # 1.37e11 FLOP / 50e12


def test_on_catalog_name(capsys):
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--on", "h200", "--json"])
    assert d["roof"]["name"].startswith("NVIDIA H200")
    assert d["analysis"][0]["bytes_per_s"] == pytest.approx(4.8e12)
    assert d["bound"] == "compute" and d["binding"] == "fp16 tensor"


@pytest.mark.parametrize(("argv", "needle"), [
    (["ai", "matmul", "0", "4", "4"], "m must be a positive whole number"),
    (["ai", "matmul", "-4", "4", "4"], "m must be a positive whole number"),
    (["ai", "matmul", "4.5", "4", "4"], "whole number"),
    (["ai", "matmul", "4", "4", "4", "--dtype", "fp12"], "unknown dtype 'fp12'"),
    (["ai", "softmax", "4", "-1"], "cols must be"),
    (["ai", "conv2d", "--n", "1", "--c", "3", "--h", "2", "--w", "2", "--k", "8"], "does not fit"),
    (["ai", "attention", "--heads", "8", "--kv-heads", "3", "--q-len", "1", "--kv-len", "8",
      "--head-dim", "64"], "--kv-heads 3 must divide --heads 8"),    # the options, by name
    (["ai", "matmul", "4", "4", "4", "--on", "no-such-gpu-9000"], "no-such-gpu-9000"),
    (["ai", "matmul", "4", "4", "4", "--on", "missing.json"], "missing.json: file not found"),
])
def test_bad_input_one_line_error_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and needle in err and "\n" not in err


def test_every_op_runs(capsys):
    for argv in (["gemv", "4096", "4096"], ["reduction", "1e6", "--rows", "4"],
                 ["softmax", "4096", "4096"], ["layernorm", "2048", "4096"],
                 ["rmsnorm", "1", "2048"], ["embedding", "8", "2048"],
                 ["conv2d", "--n", "8", "--c", "64", "--h", "56", "--w", "56", "--k", "64",
                  "--padding", "1", "--dtype", "fp32"],
                 ["attention", "--heads", "32", "--kv-heads", "4", "--q-len", "1",
                  "--kv-len", "500", "--head-dim", "64", "--naive", "--causal"],
                 ["gemm", "8", "8", "8", "--batch", "3", "--dtype", "int4"]):
        d = _json(capsys, ["ai", *argv, "--json"])
        assert d["flop"] >= 0 and d["bytes"] > 0
    # int4 A and B (0.5 B) and the int32 C an int4 GEMM returns (4 B), 3 batches
    assert d["flop"] == 2 * 3 * 8**3 and d["bytes"] == 3 * (2 * 64 * 0.5 + 64 * 4)


def test_ai_path_stays_light():
    code = ("import sys\nfrom rooflab.cli.main import main\n"
            "rc = main(['ai', 'matmul', '64', '64', '64', '--json'])\n"
            "heavy = [m for m in ('matplotlib', 'torch', 'numba') if m in sys.modules]\n"
            "print('HEAVY', rc, heavy, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert "HEAVY 0 []" in out.stderr
