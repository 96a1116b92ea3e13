"""Review s33 F5: `rooflab scale llama-2-7b` failed with typer's bare "Got unexpected extra
argument(s) (llama-2-7b)". scale's model is --hidden/--blocks (12 h^2 parameters a block: h x
3h + h x h + h x 4h + 4h x h, no GQA or SwiGLU); the error now says so and where a real
model's data-parallel step is (`rooflab train MODEL --on HW --dp N`), exit 2."""

from __future__ import annotations

import subprocess
import sys

from rooflab.cli.main import main


def test_a_model_name_gets_a_clear_error(capsys):
    assert main(["scale", "llama-2-7b"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert ("error: scale takes no model ('llama-2-7b'): its model is --hidden H --blocks L, "
            "transformer blocks of 12 h^2 parameters (no GQA, no SwiGLU; default --hidden "
            "4096 --blocks 32)") in err
    assert "`rooflab train llama-2-7b --on HW --dp N`" in err
    assert "unexpected extra argument" not in err and "Traceback" not in err


def test_the_given_on_is_carried_into_the_hint(capsys):
    assert main(["scale", "llama-2-7b", "--on", "H100 SXM"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "`rooflab train llama-2-7b --on 'H100 SXM' --dp N`" in err


def test_the_hidden_argument_stays_out_of_the_usage():
    r = subprocess.run([sys.executable, "-m", "rooflab", "scale", "--help"],
                       capture_output=True, text=True, env={"COLUMNS": "100", "PATH": ""},
                       check=False)
    assert r.returncode == 0
    assert "Usage: rooflab scale [OPTIONS]" in r.stdout and "MODEL" not in r.stdout
