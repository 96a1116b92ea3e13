"""`rooflab llm --ttft-ms --tpot-ms -o` writes each measured step with its own launches,
and the CSV has the measured rows the JSON has (s35 H: the CSV had none).

deepseek-v2-lite (27 layers, MLA) on H100, batch 1, prompt 512: the prefill runs
kv_b_proj once a layer, the decode step the absorbed q_absorb and v_absorb instead, one
kernel more a layer, so the measured prefill's `calls` is its kernels' 538 and the
measured decode step's 565 = 538 + 27 (the prefill's was said to carry the decode's; on
llama-2-7b both steps launch 451, the same kernels). Each measured row of the CSV carries
its JSON kernel's FLOP, bytes and calls, floor_s the floor llm.measured places it against
and measured_s the time given: 0.009 s (--tpot-ms 9) and 0.12 s (--ttft-ms 120)."""

from __future__ import annotations

import csv
import json

import pytest
from cli_inproc import quiet_out as _quiet

RUN = ["llm", "deepseek-v2-lite", "--on", "H100", "--ttft-ms", "120", "--tpot-ms", "9"]
PREFILL, DECODE = "prefill b=1 x 512 (measured)", "decode step b=1 (measured)"




@pytest.fixture(scope="module")
def written(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("s35hl")
    doc, table = tmp / "d.json", tmp / "d.csv"
    _quiet([*RUN, "-o", str(doc)])
    _quiet([*RUN, "-o", str(table)])
    with open(table, newline="") as f:
        rows = list(csv.DictReader(f))
    return str(doc), json.loads(doc.read_text()), rows


def test_each_measured_step_carries_its_own_launches(written):
    _, doc, _ = written
    kernels = {k["name"]: k for k in doc["kernels"]}
    llm = doc["llm"]
    assert kernels[PREFILL]["calls"] == 538 == sum(k["calls"]
                                                   for k in llm["prefill"]["kernels"])
    assert kernels[DECODE]["calls"] == 565 == sum(k["calls"]
                                                  for k in llm["decode"]["kernels"])


def test_whatif_splits_off_the_prefill_s_launches(written):
    path, _, _ = written
    text = " ".join(_quiet(["whatif", path, "--on", "H100", "--batch", "8"]).split())
    assert f"{PREFILL}: a whole step timed as one point, its 538 launches" in text
    assert f"{DECODE}: a whole step timed as one point, its 565 launches" in text


def test_the_csv_has_the_json_s_measured_rows(written):
    _, doc, rows = written
    kernels = {k["name"]: k for k in doc["kernels"]}
    measured = {r["kernel"]: r for r in rows if r["phase"].endswith("_measured")}
    assert set(measured) == {PREFILL, DECODE}
    assert measured[PREFILL]["phase"] == "prefill_measured"
    assert measured[DECODE]["phase"] == "decode_measured"
    placed = doc["llm"]["measured"]
    for name, given, at in ((PREFILL, 0.12, placed["prefill"]), (DECODE, 0.009, placed)):
        row, k = measured[name], kernels[name]
        assert int(row["calls"]) == k["calls"]
        assert float(row["measured_s"]) == pytest.approx(given, rel=1e-12)
        assert float(row["flop"]) == pytest.approx(sum(k["flop"].values()), rel=1e-12)
        assert float(row["bytes"]) == pytest.approx(sum(k["bytes"].values()), rel=1e-12)
        assert float(row["kv_bytes"]) == pytest.approx(k["meta"]["bytes_split"]["kv"])
        assert float(row["floor_s"]) == pytest.approx(at["floor_s"], rel=1e-12)
    # every other row leaves measured_s empty
    assert all(r["measured_s"] == "" for r in rows if not r["phase"].endswith("_measured"))
