"""`rooflab specs list | head -1` under `set -o pipefail`: the reader leaving is not a
regression. rich answered the closed pipe with SystemExit(1) -- exit 1 is reserved for
`compare --fail-if-slower` -- so a CI script read `| head` as a regression."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("argv", [["specs", "list"], ["llm", "tinyllama-1.1b", "--on", "T4"]])
def test_a_closed_pipe_exits_0_quietly(argv):
    p = subprocess.Popen([sys.executable, "-m", "rooflab", *argv], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.read(10)
    p.stdout.close()          # the reader leaves, as `head -1` does
    err = p.stderr.read()
    assert p.wait(timeout=120) == 0
    assert b"Traceback" not in err and b"error" not in err


def test_profiler_tables_honour_columns_in_a_pipe(fixtures_dir, monkeypatch, capsys):
    """ncu/torch/rocprof tables in a pipe: 160 columns, or COLUMNS when set (it was fixed
    at 160 whatever COLUMNS said)."""
    from rooflab.cli.main import main

    path = str(fixtures_dir / "ncu" / "nersc-gpp" / "output1.csv")
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["ncu", path]) == 0
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) <= 100
    monkeypatch.delenv("COLUMNS")
    assert main(["ncu", path]) == 0
    assert 100 < max(len(line) for line in capsys.readouterr().out.splitlines()) <= 160


def test_a_regression_into_dev_null_still_exits_1(tmp_path):
    """A CI gate that throws the table away (`> /dev/null`) must still fail: the closed-pipe
    rule reads a stdout on os.devnull, so it must not turn this exit 1 into 0."""
    import json

    def run(name, gemm_s, add_s):
        ks = [{"name": n, "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": s}
              for n, s in (("gemm", gemm_s), ("add", add_s))]
        (tmp_path / name).write_text(json.dumps({"kernels": ks}))
        return str(tmp_path / name)

    before, after = run("b.json", 2.0, 0.10), run("a.json", 1.0, 0.12)   # add +20 %
    p = subprocess.run([sys.executable, "-m", "rooflab", "compare", before, after,
                        "--fail-if-slower", "10"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=120)
    assert p.returncode == 1 and b"slower by more than 10 %: add" in p.stderr
