"""`rooflab choose` on an `llm --tp 8 --phase prefill` document ranks by the prefill's TP
link, as `rooflab llm` adds it to the TTFT floor (s21 d1 item 2; choose.py passes its
StepScope to choose_tp_links): H200 172.4 ms + 84.0 ms = 256.4 ms, where it added the
decode step's 43 us; the floor is keyed tp_step_floor_s (no tp_tpot_floor_s on a prefill).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


def _llm(tmp_path, capsys, name: str, *extra: str) -> str:
    assert main(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", *extra, "--json"]) == 0
    path = tmp_path / name
    path.write_text(capsys.readouterr().out)
    return str(path)


def _row(capsys, doc: str) -> dict:
    assert main(["choose", doc, "--among", "H200", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["devices"][0]


def test_prefill_and_decode_rows(tmp_path, capsys):
    pre = _llm(tmp_path, capsys, "pre.json", "--batch", "4", "--phase", "prefill",
               "--prompt", "2048")
    row = _row(capsys, pre)
    assert row["step"] == "prefill"
    assert "tp_tpot_floor_s" not in row
    assert row["tp_link_s"] == pytest.approx(84.04e-3, rel=1e-3)
    assert row["tp_step_floor_s"] == pytest.approx(256.4e-3, rel=1e-3)
    assert row["ranked_s"] == pytest.approx(256.4e-3, rel=2e-3)
    dec = _llm(tmp_path, capsys, "dec.json", "--batch", "64")
    row = _row(capsys, dec)
    assert row["step"] == "decode"
    assert row["tp_tpot_floor_s"] == row["tp_step_floor_s"] == pytest.approx(4.98e-3, abs=5e-6)
