"""Review s20 r2 F3: Kernel took NaN, inf, zero and negative timing samples (though it
refuses such `seconds`), and compare then tested them: nine -1 ms samples read '+1.2 %,
outside noise', a NaN raised a bare ValueError inside a property. Now Kernel refuses
them at construction, naming the kernel and the sample, and the CLI says which file."""

from __future__ import annotations

import json
import math

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.model.kernel import Kernel


@pytest.mark.parametrize("bad", [math.nan, math.inf, 0.0, -1e-3, "1e-3", True, None,
                                 pytest.param(10**400, id="10**400")])
def test_a_kernel_refuses_a_sample_that_is_no_time(bad):
    samples = (1e-3, 1.1e-3, bad, 1e-3)
    with pytest.raises(InputError) as e:
        Kernel("gemm", flop={"fp32": 1.0}, seconds=1e-3, samples=samples)
    text = str(e.value)
    assert text.startswith("kernel 'gemm': field 'samples': each timing sample must be a "
                           "number of seconds > 0 and finite; samples[2] is ")
    # with_() checks them too
    ok = Kernel("gemm", flop={"fp32": 1.0}, seconds=1e-3, samples=(1e-3,) * 3)
    with pytest.raises(InputError, match=r"samples\[2\]"):
        ok.with_(samples=samples)


def test_plain_numbers_of_any_kind_are_kept():
    import numpy as np

    k = Kernel("k", flop=1.0, seconds=1.0, samples=[1, np.float32(0.5), np.float64(2.0)])
    assert k.samples == (1, 0.5, 2.0)


@pytest.mark.parametrize("bad", [0.0, -0.001])
def test_the_cli_names_file_kernel_and_field(tmp_path, capsys, bad):
    good, after = tmp_path / "ok.json", tmp_path / "bad.json"
    for p, s in ((good, [1e-3] * 9), (after, [bad] * 9)):
        p.write_text(json.dumps({"schema_version": 2, "kernels": [
            {"name": "k", "flop": {"fp32": 1e9}, "seconds": 0.001, "samples": s}]}))
    assert main(["compare", str(good), str(after)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {after}: kernels[0]")
    assert "kernel 'k': field 'samples'" in err and f"samples[0] is {bad!r}" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
