"""The one CSV writer behind every `-o FILE.csv` (files.csv_text): columns in order, numbers
unformatted, None empty, lists joined, names with commas quoted, extra keys left out."""

from __future__ import annotations

import csv
import io

from rooflab.cli.llm_output import csv_text as llm_csv
from rooflab.files import csv_text


def test_cells_and_quoting():
    rows = [{"name": "gemm, bf16", "seconds": 1.5e-06, "pct": None, "missing": ["fp8", "int8"],
             "extra": "dropped"}]
    text = csv_text(rows, ("name", "seconds", "pct", "missing"))
    assert text == 'name,seconds,pct,missing\n"gemm, bf16",1.5e-06,,fp8 int8\n'
    back = list(csv.DictReader(io.StringIO(text)))
    assert back == [{"name": "gemm, bf16", "seconds": "1.5e-06", "pct": "", "missing": "fp8 int8"}]


def test_header_only_when_no_rows():
    assert csv_text([], ("a", "b")) == "a,b\n"


def test_llm_csv_rows_and_sweep():
    kernel = {"name": "attn, qk", "calls": 32, "flop": 2.0e9, "bytes": 1.0e9, "ai": 2.0,
              "floor_s": 3.0e-4, "bound": "memory",
              "bytes_split": {"weights": 6.0e8, "activations": 1.0e8, "kv": 3.0e8}}
    llm = {"decode": {"kernels": [kernel]}, "prefill": {"kernels": []},
           "sweep": {"points": [{"batch": 4, "launches": 290, "flop": 8.0e9, "bytes": 2.0e9,
                                 "weight_bytes": 1.5e9, "activations_bytes": 1.0e8,
                                 "kv_bytes": 4.0e8, "ai": 4.0, "tpot_s": 6.0e-4,
                                 "bound": "memory"}]}}
    rows = list(csv.DictReader(io.StringIO(llm_csv(llm))))
    assert [r["kernel"] for r in rows] == ["attn, qk", "step b=4"]
    assert rows[0]["weights_bytes"] == "600000000.0" and rows[0]["phase"] == "decode"
    assert rows[1]["phase"] == "decode_sweep" and rows[1]["calls"] == "290"
    assert rows[1]["floor_s"] == "0.0006"
