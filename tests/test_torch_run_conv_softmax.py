"""Second fresh-user audit of `rooflab torch --run`: conv2d and softmax by hand, no temp leak."""

from __future__ import annotations

import tempfile

import pytest

from rooflab.cli.main import main

SCRIPT = """
import torch
x = torch.randn(2, 16, 32, 32)
w = torch.randn(32, 16, 3, 3)
s = torch.randn(256, 128)
for _ in range(2):
    z = torch.nn.functional.conv2d(x, w, padding=1)
    y = torch.softmax(s, dim=-1)
"""

# conv2d N=2 C=16 32x32 -> K=32, 3x3, padding 1 (P=Q=32): 2*N*K*P*Q*C*R*S per call;
# bytes: input + weight + output, fp32.
CONV_FLOP = 2 * 2 * 32 * 32 * 32 * 16 * 3 * 3            # 18,874,368
CONV_BYTES = 4 * (2 * 16 * 32 * 32 + 32 * 16 * 9 + 2 * 32 * 32 * 32)   # 411,648
# softmax 256x128: 4 FLOP per element (max, exp, sum, divide); read once, write once.
SOFTMAX_FLOP = 4 * 256 * 128                              # 131,072
SOFTMAX_BYTES = 2 * 4 * 256 * 128                         # 262,144


def test_conv2d_and_softmax_counted_by_hand(tmp_path):
    pytest.importorskip("torch")
    from rooflab.ingest.torch_run import run_script
    from rooflab.ingest.torch_trace import load_torch_trace

    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    trace = run_script(str(script), trace_path=str(tmp_path / "t.json"))
    ops = {k.meta["op"]: k for k in load_torch_trace(trace).kernels}
    conv, soft = ops["conv2d"], ops["softmax"]
    assert conv.calls == 2 and soft.calls == 2
    assert conv.flop == {"fp32": pytest.approx(2 * CONV_FLOP)}
    assert conv.bytes == {"DRAM": pytest.approx(2 * CONV_BYTES)}
    assert conv.flop["fp32"] / conv.bytes["DRAM"] == pytest.approx(45.8507, rel=1e-4)
    assert soft.flop == {"fp32": pytest.approx(2 * SOFTMAX_FLOP)}
    assert soft.bytes == {"DRAM": pytest.approx(2 * SOFTMAX_BYTES)}


def test_failing_script_leaves_no_temp_trace(tmp_path, monkeypatch, capsys):
    # Each failed `--run` used to leave an empty /tmp/rooflab-trace-*.json behind: the
    # temp file was made before the script ran and only the success path removed it.
    pytest.importorskip("torch")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    bad = tmp_path / "bad.py"
    bad.write_text("raise ValueError('boom')\n")
    assert main(["torch", "--run", str(bad)]) == 2
    assert "ValueError: boom" in capsys.readouterr().err
    assert list(tmp.iterdir()) == []
    good = tmp_path / "good.py"
    good.write_text("import torch\ntorch.randn(4, 4) @ torch.randn(4, 4)\n")
    assert main(["torch", "--run", str(good), "--json"]) == 0
    assert list(tmp.iterdir()) == []


def test_help_example_passes_json_to_rooflab(tmp_path, capsys):
    # `--help` shows `rooflab torch --run train.py --json -- --steps 3`: --json is
    # rooflab's (JSON on stdout), --steps 3 the script's (it used to show --json after --,
    # where it goes to the script and rooflab prints its table)
    pytest.importorskip("torch")
    import json

    assert main(["torch", "--help"]) == 0
    assert "rooflab torch --run train.py --json -- --steps 3" in capsys.readouterr().out
    train = tmp_path / "train.py"
    train.write_text("import sys, torch\nprint('ARGV', sys.argv[1:])\n"
                     "torch.randn(8, 8) @ torch.randn(8, 8)\n")
    assert main(["torch", "--run", str(train), "--json", "--", "--steps", "3"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["kernels"][0]["name"] == "aten::mm [8x8, 8x8]"
    assert "ARGV ['--steps', '3']" in err


def test_run_json_names_the_script_not_a_deleted_temp_trace(tmp_path, capsys):
    pytest.importorskip("torch")
    import json

    script = tmp_path / "model.py"
    script.write_text("import torch\ntorch.randn(8, 8) @ torch.randn(8, 8)\n")
    assert main(["torch", "--run", str(script), "--json"]) == 0
    (k,) = json.loads(capsys.readouterr().out)["kernels"]
    assert k["meta"]["file"] == str(script)


def test_run_is_quiet_and_points_a_cpu_trace_at_a_cpu_roof(tmp_path):
    # The profiler's native 'USDT: … profiler_start/stop' lines stay out of the output; the
    # script's own stderr does not; a CPU-only trace without --on is pointed at a probe
    # profile, not at a GPU.
    import json
    import subprocess
    import sys

    pytest.importorskip("torch")
    script = tmp_path / "s.py"
    script.write_text("import sys, torch\nprint('mine', file=sys.stderr)\n"
                      "x = torch.ones(64, 64) @ torch.ones(64, 64)\n")
    run = subprocess.run([sys.executable, "-c", "import sys; from rooflab.cli.main import main; "
                          "raise SystemExit(main(sys.argv[1:]))", "torch", "--run", str(script),
                          "--json"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "profiler_start" not in run.stderr and "USDT" not in run.stderr
    assert "mine" in run.stderr
    src = json.loads(run.stdout)["roof_source"]
    assert src.endswith("pass --on me.json (a profile from `rooflab probe -o me.json`) or a "
                        "CPU name for this machine's roof")
