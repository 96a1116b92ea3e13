"""docs/json.md lists the keys `rooflab ai occupancy --on MI300X --json` writes (session 30,
AMD loose ends 2: the CDNA answer's keys were undocumented)."""

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main

JSON_MD = Path(__file__).resolve().parents[1] / "docs" / "json.md"


def test_every_cdna_occupancy_key_is_documented(capsys):
    assert main(["ai", "occupancy", "--block", "256", "--regs", "128", "--on", "MI300X",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    text = " ".join(JSON_MD.read_text("utf-8").split())
    keys = set(d) - {"schema_version", "generator"}       # documented once for all verbs
    keys |= set(d["block_limits"])
    missing = sorted(k for k in keys if f"`{k}`" not in text)
    assert not missing, f"docs/json.md does not name {missing}"
    # the worked example the page gives: 512 // 128 = 4 waves per SIMD x 4 SIMDs = 16 waves
    # = 4 workgroups of 4 waves, 16 of 32 = 0.5
    assert d["block_limits"] == {"waves": 8, "vgprs": 4, "sgprs": None, "lds": None}
    assert (d["active_waves_per_cu"], d["max_waves_per_cu"]) == (16, 32)
    assert d["theoretical_occupancy"] == pytest.approx(0.5) and d["binding"] == ["vgprs"]
    assert ("`block_limits` {`waves` 8, `vgprs` 4, `sgprs` null, `lds` null}, "
            "`active_waves_per_cu` 16 of 32, `theoretical_occupancy` 0.5") in text
