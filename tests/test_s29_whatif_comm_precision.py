"""whatif --precision on a `rooflab train --dp` file: the gradient collective's bytes follow
the gradient dtype (meta grad_bytes), at least 2 B a value; it has no FLOP precision to read
(read as fp32, --precision bf16 halved a bf16 step's all-reduce: 52.4 -> 26.2 ms)."""

from __future__ import annotations

import pytest

from rooflab.cli.main import main


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["train", "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq",
                     "4096", "--dp", "8", "--zero", "1", "--json", "--quiet"]) == 0
    path = tmp_path_factory.mktemp("t") / "t.json"
    path.write_text(out.getvalue())
    return path


@pytest.mark.parametrize("precision,ratio", [("bf16", 1.0), ("fp8", 1.0), ("fp32", 2.0)])
def test_gradient_collective_follows_the_gradient_dtype(train_file, precision, ratio):
    from rooflab.ingest.kernelfile import load_kernels
    from rooflab.model.whatif_precision import comm_in_precision
    from rooflab.units import dtype_bytes

    (k,) = [k for k in load_kernels(str(train_file)) if k.name == "comm.zero1"]
    # 2 x 13.48 GB x 7/8: reduce-scatter of the bf16 gradients + all-gather of the weights
    assert k.bytes["NVLink"] == pytest.approx(2 * 2 * 6_738_415_616 * 7 / 8)
    new = comm_in_precision(k, dtype_bytes(precision))
    assert new.bytes["NVLink"] == pytest.approx(k.bytes["NVLink"] * ratio)


def test_whatif_words_say_the_gradient_rule(capsys, train_file):
    code = main(["whatif", str(train_file), "--precision", "fp8"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "moves gradients of at least 2 B a value" in out + err
    row = next(x for x in out.splitlines() if "comm.zero1" in x)
    assert row.count("52.4 ms") == 2          # before and after: unchanged
