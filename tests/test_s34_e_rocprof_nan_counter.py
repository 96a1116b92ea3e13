"""Review s34 E: an MFMA counter cell that is not a number (`nan`, `n/a`: a failed counter
pass, a hand edit) in rocprof's counter CSV.

Before: the fp8 GEMM's 512 x 1e6 = 5.12e8 fp8 FLOP vanished without a word: the kernel
read as 0 fp32 FLOP (AI 0, "latency"), exit 0 and no note. A byte counter's n/a already had
its note ("no DRAM point"). Now the kernel says which counter was not a number and that its
FLOP may read low.
"""

from __future__ import annotations

from test_amd_rocm import PMC_PERF

from rooflab.cli.main import main
from rooflab.ingest.rocprof import load_rocprof

MFMA = "SQ_INSTS_VALU_MFMA_MOPS_F8"
NOTE = f"{MFMA} is not a number (n/a): no fp8 MFMA FLOP counted, so the FLOP may read low"


def _with_mfma_cell(tmp_path, cell: str) -> str:
    header, first, *rest = PMC_PERF.splitlines()
    cells = first.split(",")
    at = header.split(",").index(MFMA)
    assert cells[at] == "1000000"        # fp8_gemm: 1e6 MOPS x 512 = 5.12e8 fp8 FLOP
    cells[at] = cell
    p = tmp_path / "pmc_perf.csv"
    p.write_text("\n".join([header, ",".join(cells), *rest]) + "\n")
    return str(p)


def test_a_nan_mfma_cell_is_said_not_read_as_no_flop(tmp_path, capsys):
    k = {k.name: k for k in load_rocprof(_with_mfma_cell(tmp_path, "1000000")).kernels}
    assert k["fp8_gemm"].flop == {"fp8": 512.0 * 1_000_000}       # the file as recorded
    assert NOTE not in k["fp8_gemm"].meta.get("notes", [])
    for cell in ("nan", "n/a"):
        path = _with_mfma_cell(tmp_path, cell)
        k = {k.name: k for k in load_rocprof(path).kernels}["fp8_gemm"]
        assert "fp8" not in k.flop, cell
        assert NOTE in k.meta["notes"], (cell, k.meta.get("notes"))
        assert main(["rocprof", path, "--on", "mi300x"]) == 0
        said = capsys.readouterr()       # notes after the table follow it on stdout
        assert f"note: fp8_gemm: {NOTE}" in said.out + said.err, cell
        assert "Traceback" not in said.out + said.err, cell
