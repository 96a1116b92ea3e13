"""`rooflab whatif --batch` and `rooflab llm --micro-batches` with absurd values (s36 J).

whatif --batch 1e30 was refused as the file's fault ("kernel 'embedding': bytes[DRAM]
4.1e+33 is outside the range rooflab takes ... is the unit right?"); `llm --pp 2
--micro-batches 1e22` said "at most 0 per micro-batch (--batch 0)", a batch llm refuses."""

from __future__ import annotations

import json

import pytest
from cli_inproc import one_line_error, run_cli


def _kernels(tmp_path) -> str:
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [{"name": "gemm", "flop": {"fp16": 1e20}, "bytes": 1e10,
                                             "seconds": 1.0, "meta": {"batch": 1}}]}))
    return str(path)


def test_whatif_batch_past_the_range_names_the_largest(tmp_path, capsys):
    """1e20 FLOP and 1 s at batch 1: the FLOP reach 1e30 at batch 1e10, the time 1e7 s at
    batch 1e7, the tighter: --batch 10,000,001 refused, 10,000,000 named (and taken)."""
    k = _kernels(tmp_path)
    err = one_line_error(capsys, ["whatif", k, "--on", "H100 SXM", "--batch", "10000001"])
    assert err == ("error: --batch 10000001: the kernels' FLOP, bytes and times at that "
                   "batch leave the range rooflab takes (up to 1e+30 FLOP or bytes, 1e+07 "
                   "s); give --batch 10,000,000 or less")
    assert run_cli("whatif", k, "--on", "H100 SXM", "--batch", "10000000").returncode == 0
    err = one_line_error(capsys, ["whatif", k, "--on", "H100 SXM", "--batch", "9" * 30])
    assert "is the unit right" not in err and "give --batch 10,000,000 or less" in err


def test_llm_micro_batches_that_fit_no_sequence_say_so(capsys):
    """llama-2-7b, --pp 2, 1e22 micro-batches of one sequence in flight: the KV alone is
    1e22 x 168 MB; not one sequence per micro-batch fits, so the fix is fewer micro-batches,
    not "--batch 0"."""
    done = run_cli("llm", "llama-2-7b", "--on", "H100 SXM", "--pp", "2",
                   "--micro-batches", "1" + "0" * 22)
    assert done.returncode == 0
    assert "--batch 0" not in done.stdout
    assert ("not one sequence per micro-batch fits at that many: give fewer micro-batches "
            "(--micro-batches)") in done.stdout


@pytest.mark.parametrize("args, said", [
    # 2**20 + 1 = 1,048,577 sequences: one past the range
    (["--batch", "1048577"], "error: --batch 1048577 sequences on a device is past the range "
                             "rooflab takes, 1 to 1,048,576"),
    # 2**24 + 1 = 16,777,217 tokens, each length option by its name
    (["--prompt", "16777217"], "error: --prompt 16777217 tokens is past the range rooflab "
                               "takes, 1 to 16,777,216"),
    (["--context", "512,16777217"], "error: --context 16777217 tokens is past the range"),
    (["--generate", "9" * 30], "error: --generate 999999999999999999999999999999 tokens"),
])
def test_llm_sizes_past_the_range_are_named(capsys, args, said):
    """Before: `--batch 1e30` said "tokens is 1e+30", `--prompt`/`--context`/`--generate
    1e30` "kernel 'attention': flop[fp16] 5.2e+35 is outside the range ... is the unit
    right?", and 1,048,577 sequences or 16,777,217 tokens ran."""
    err = one_line_error(capsys, ["llm", "llama-2-7b", "--on", "H100 SXM", *args])
    assert err.startswith(said), err


def test_llm_request_takes_the_bounds_themselves():
    """2**20 sequences and 2**24 tokens are inside (the bound is inclusive); one more
    is not, from Python as from the command line (Request is the one check)."""
    from rooflab.errors import InputError
    from rooflab.workloads.llm.analysis import Request

    assert Request(batches=(2**20,), prompt=2**24, generate=2**24).batch == 2**20
    with pytest.raises(InputError, match="--generate 16777217 tokens is past the range"):
        Request(generate=2**24 + 1)
