"""Review s33 F2: every size of `rooflab ai` is at most 2**63 - 1, but a product of them is
not: `ai upsample --n 1 --c 2 --h 4 --w 4 --scale 1e10` printed an output of 6400 EB
(1 x 2 x 4e10 x 4e10 = 3.2e21 elements x 2 B = 6.4e21 B) and exit 0. No tensor holds more
than 2**63 - 1 = 9.22e18 elements (torch's and numpy's int64 sizes): such sizes are refused,
as helper D's count check refuses FLOP past 1e30, exit 2, no traceback.
"""

from __future__ import annotations

import pytest

from rooflab.cli.main import main

REFUSED = [
    # (argv, the tensor named, its elements by hand)
    (["upsample", "--n", "1", "--c", "2", "--h", "4", "--w", "4", "--scale", "1e10"],
     "upsample_nearest: these sizes give output 3.2e+21 elements"),     # 2 x 4e10 x 4e10
    (["matmul", "1e10", "1e10", "1"], "matmul: these sizes give C 1e+20 elements"),
    (["gemv", "1e10", "1e10"], "gemv: these sizes give A 1e+20 elements"),
    (["softmax", "1e10", "1e10"], "softmax: these sizes give x 1e+20 elements"),
    (["embedding", "1e10", "1e10"], "embedding: these sizes give output 1e+20 elements"),
    (["stencil", "1e7x1e7x1e7", "--points", "7"],
     "stencil: these sizes give grid 1e+21 elements"),                  # (1e7)^3
    (["pool2d", "--n", "1e5", "--c", "1e5", "--h", "1e5", "--w", "1e5"],
     "max_pool2d: these sizes give input 1e+20 elements"),              # (1e5)^4
]


@pytest.mark.parametrize(("argv", "said"), REFUSED)
def test_a_tensor_past_int64_elements_is_refused(argv, said, capsys):
    assert main(["ai", *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and "more than the 2**63 - 1 = 9.22e+18 a tensor holds" in err
    assert "check the sizes" in err and "Traceback" not in err


def test_large_tensors_that_exist_still_count(capsys):
    """A flash attention of 1e5 heads x 1e5 x 1e5 never makes its 1e15-score matrix; each
    of 100 inputs of 1e18 elements is below 9.22e18: both answer."""
    assert main(["ai", "attention", "--heads", "1e5", "--q-len", "1e5", "--kv-len", "1e5",
                 "--head-dim", "64", "--json"]) == 0
    assert main(["ai", "elementwise", "1e18", "--inputs", "100", "--json"]) == 0
    # 1e5 x 1e5 x 1e5 = 1e15 scores, materialised by --naive, is below 9.22e18 too
    assert main(["ai", "attention", "--heads", "1e5", "--q-len", "1e5", "--kv-len", "1e5",
                 "--head-dim", "64", "--naive", "--json"]) == 0
    capsys.readouterr()


def test_the_naive_score_matrix_is_checked(capsys):
    # 1e7 heads x 1e7 x 1e7 = 1e21 scores (Q alone is 1e7 x 1e7 x 1 = 1e14, below)
    argv = ["ai", "attention", "--heads", "1e7", "--q-len", "1e7", "--kv-len", "1e7",
            "--head-dim", "1"]
    assert main([*argv, "--naive"]) == 2
    assert "attention: these sizes give scores 1e+21 elements" in capsys.readouterr().err
    assert main(argv) == 0        # flash: no score matrix in memory
