"""`rooflab train` with absurd sizes (s36 J): each a one-line error naming the option, the
range and why, exit 2, or, legal but unusual, a note. Before: `--dp 1e30` printed a step of
1e30 devices (exit 0), `--accumulate 1e30` said "kernel 'embedding': bytes[DRAM] 3.36e+37 is
outside the range ... is the unit right?", `--seq 1e30` "tokens is 1e+30", `--bucket-mb
1e-9` ran out of memory timing 1.4e13 buckets (13.5 GB / 1e-9 MiB)."""

from __future__ import annotations

import pytest
from cli_inproc import one_line_error, run_cli

from rooflab.errors import InputError
from rooflab.workloads.llm.train import TrainSetup

BIG = "9" * 30
BASE = ["train", "llama-2-7b", "--on", "H100 SXM"]


@pytest.mark.parametrize("args, words", [
    # 1e30 devices: the range, why, and which option to shrink
    (["--dp", BIG], ["--dp 999999999999999999999999999999 x --tp 1 is 1e+30 devices",
                     "rooflab takes 1 to 1,048,576", "give a smaller --dp"]),
    # 2**20 + 1 = 1,048,577 devices: one past the range
    (["--dp", "1048577"], ["is 1,048,577 devices"]),
    # --tp past it: named, not --dp (the heads check comes after)
    (["--tp", BIG], ["--dp 1 x --tp", "give a smaller --tp"]),
    # 2**24 + 1 = 16,777,217 tokens: one past the range
    (["--seq", "16777217"], ["--seq 16777217 tokens per sequence is past the range",
                             "1 to 16,777,216"]),
    (["--seq", BIG], ["--seq 999999999999999999999999999999 tokens per sequence"]),
    # 1e30 x 2048 = 2.05e+33 tokens per optimizer step, each factor named
    (["--accumulate", BIG], ["--dp 1 x --batch 1 x --seq 2048 x --accumulate "
                             "999999999999999999999999999999 is 2.05e+33 tokens per "
                             "optimizer step", "up to 1e+13"]),
    (["--batch", BIG], ["is 2.05e+33 tokens per optimizer step", "smaller --batch"]),
    # 8 x 1 x 2048 x 610,351,563 = 1.00000000256e13 > 1e13: the product, not one option
    (["--dp", "8", "--accumulate", "610351563"], ["--dp 8 x --batch 1 x --seq 2048",
                                                  "is 1e+13 tokens"]),
    (["--dp", "8", "--bucket-mb", "1e-9"], ["--bucket-mb 1e-09 is below the range",
                                             "1 MiB or more"]),
    (["--dp", "8", "--bucket-mb", "0.5"], ["--bucket-mb 0.5 is below the range"]),
])
def test_absurd_size_is_a_one_line_error(capsys, args, words):
    err = one_line_error(capsys, [*BASE, *args])
    for w in words:
        assert w in err, err


def test_the_bounds_themselves_run():
    """2**24 tokens and 2**20 devices are inside: TrainSetup takes them (the bound is
    inclusive); 1e13 tokens per step is too (8 x 1 x 2048 x 610,351,562 = 9.99999e12)."""
    TrainSetup(seq=2**24)
    TrainSetup(dp=2**20)
    TrainSetup(dp=8, accumulate=610_351_562)
    with pytest.raises(InputError, match="1,048,577 devices"):
        TrainSetup(dp=2**20 + 1)


def test_a_package_of_dies_counts_its_ranks_in_the_tokens():
    """An MI250X's --dp 4 is 8 ranks (2 dies each), each running --batch: 8 x 1 x 2048 x
    610,351,563 = 1e13 tokens, said in --dp's units with the ranks beside."""
    with pytest.raises(InputError, match=r"--dp 4 \(8 ranks\) x --batch 1"):
        TrainSetup(dp=8, dies=2, accumulate=610_351_563)


def test_huge_but_legal_step_gets_a_note():
    """--accumulate 1e8: 2048 x 1e8 = 2.05e11 tokens per optimizer step, inside the range
    (1e13) but past any global batch trained with (4M-60M): said once; --accumulate 100
    (204,800 tokens) says nothing of it."""
    done = run_cli(*BASE, "--accumulate", "100000000")
    assert done.returncode == 0
    assert "note: 2.05e+11 tokens per optimizer step: past the global batches" in done.stdout
    done = run_cli(*BASE, "--accumulate", "100")
    assert "tokens per optimizer step: past" not in done.stdout
