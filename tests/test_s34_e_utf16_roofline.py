"""Review s34 E: rocprof-compute's roofline.csv saved as UTF-16 (Excel's "Unicode text",
PowerShell's `>` redirect) given as --on.

Before: `error: roofline.csv: not rocprof-compute's roofline.csv: it is a rocprof file`
(exit 2): the header check read the file's first line as UTF-8, while every reader after
it decodes UTF-16. Now the check decodes as the readers do, and the roof is the file's:
HBMBw 4216.1 GB/s -> DRAM 4.2161e12 B/s, L2Bw 14286.3 GB/s -> 1.42863e13 B/s.
"""

from __future__ import annotations

import json

import pytest
from test_amd_rocm import PMC_PERF

from rooflab.cli.main import main

ROOFLINE = ("device,HBMBw,L2Bw,L1Bw,LDSBw,MFMAF16Flops,FP32Flops\n"
            "0,4216.1,14286.3,24653.6,57186.4,700000,150000\n")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_a_utf16_roofline_csv_is_the_roof(tmp_path, capsys, encoding):
    pmc = tmp_path / "pmc_perf.csv"
    pmc.write_text(PMC_PERF)
    roofline = tmp_path / "roofline.csv"
    text = ROOFLINE if encoding != "utf-16-le" else "\ufeff" + ROOFLINE   # LE with its BOM
    roofline.write_bytes(text.encode(encoding))
    assert main(["rocprof", str(pmc), "--on", str(roofline), "--json"]) == 0, \
        capsys.readouterr().err
    roof = json.loads(capsys.readouterr().out)["roof"]
    memory = {m["level"]: m["bytes_per_s"] for m in roof["memory"]}
    assert memory["DRAM"] == pytest.approx(4216.1e9)
    assert memory["L2"] == pytest.approx(14286.3e9)
    assert "rocprof-compute roofline" in roof["name"]
