"""`rooflab ai OP`: a misspelt option is "No such option", as on every other verb, not an
extra size; a negative size still reaches the size check (why the ops ignore unknown
options at all)."""

from __future__ import annotations

import pytest

from rooflab.cli.main import main


@pytest.mark.parametrize(("argv", "said"), [
    (["ai", "matmul", "4096", "4096", "4096", "--tiles", "64x64"],
     "No such option: --tiles (Possible options: --stages, --tile, --tiles-per-sm)"),
    (["ai", "matmul", "4", "4", "4", "--tile-size=4"],
     "No such option: --tile-size (Possible options: --tile, --tiles-per-sm)"),
    (["ai", "embedding", "--tokens", "512"], "No such option: --tokens"),
    (["ai", "dot", "1e6", "--dtyp", "fp32"], "No such option: --dtyp (Possible options: --dtype)"),
    (["ai", "stencil", "64", "-x"], "No such option: -x"),
])
def test_a_misspelt_option_is_no_such_option(capsys, argv, said):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {said}")
    assert "unexpected extra argument" not in err and "whole number" not in err


@pytest.mark.parametrize(("argv", "said"), [
    (["ai", "matmul", "-4", "4", "4"], "m must be a positive whole number; got -4"),
    (["ai", "matmul", "4", "4", "-1e3"], "k must be a positive whole number; got -1000"),
])
def test_a_negative_size_still_reaches_the_size_check(capsys, argv, said):
    assert main(argv) == 2
    assert said in capsys.readouterr().err


def test_known_options_in_every_form_still_work(capsys):
    # 2*4*4*4 = 128 FLOP; bf16 bytes 2*(16+16+16) = 96
    for argv in (["ai", "matmul", "4", "4", "4", "-dbf16"],
                 ["ai", "matmul", "4", "4", "4", "--dtype=bf16", "--tile=2x2"],
                 ["ai", "matmul", "4", "4", "4", "-d", "bf16"]):
        assert main(argv) == 0, argv
        out = capsys.readouterr().out
        assert "128 FLOP" in out and "96 B" in out
