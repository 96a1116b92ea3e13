"""`rooflab ai elementwise --stride S` (model/coalescing.py): 32-byte sectors, by hand."""

from __future__ import annotations

import json
import subprocess

import pytest
from cli_inproc import run_cli

from rooflab.model.coalescing import strided


def _ai(*args: str) -> subprocess.CompletedProcess:
    return run_cli("ai", "elementwise", *args)


@pytest.mark.parametrize("stride,eff", [(1, 1.0), (2, 0.5), (4, 0.25), (8, 0.125),
                                        (9, 0.125), (1000, 0.125)])
def test_fp32_efficiency(stride, eff):
    # 1e8 fp32 elements: stride 2 spans 8 B each -> 2.5e7 sectors = 8e8 B for 4e8 useful
    a = strided(10**8, stride, 4)
    assert a.efficiency == eff
    assert a.fetched_bytes == 4 * 10**8 / eff


def test_other_sizes():
    assert strided(10**6, 4, 8).efficiency == 1 / 4      # fp64 stride 4: 8 of 32 B
    assert strided(10**6, 16, 2).efficiency == 1 / 16    # fp16 stride 16: 2 of 32 B
    assert strided(10**6, 3, 4).sectors == 375_000       # 12 B apart: 3/8 of a sector each
    assert strided(1000, 1, 2).sectors == 63             # 2000 B: 62.5 -> 63 sectors
    assert strided(64, 1, 0.5).sectors == 1              # int4: 64 x 0.5 B = one sector


def test_cli_bytes_and_ai():
    # fp32 y = x + 1 over 1e8: coalesced 8e8 B, AI 1/8; stride 2 doubles the bytes
    d = json.loads(_ai("1e8", "--dtype", "fp32", "--stride", "2", "--json").stdout)
    assert d["bytes"] == 1.6e9 and d["ai"] == pytest.approx(1 / 16)
    c = d["coalescing"]
    assert (c["efficiency"], c["useful_bytes"], c["fetched_bytes"], c["coalesced_ai"]) == \
        (0.5, 8e8, 1.6e9, 0.125)
    d = json.loads(_ai("1e8", "--dtype", "fp32", "--stride", "8", "--inputs", "2",
                       "--json").stdout)
    assert d["bytes"] == 3 * 3.2e9 and d["coalescing"]["efficiency"] == 0.125
    r = _ai("1e8", "--dtype", "fp32", "--stride", "8")
    assert "12.5 % of each 32-byte sector is used" in r.stdout
    # stride 1 is the compulsory count
    d = json.loads(_ai("1e8", "--dtype", "fp32", "--stride", "1", "--json").stdout)
    assert d["bytes"] == 8e8 and d["coalescing"]["efficiency"] == 1.0
    r = _ai("1e8", "--stride", "0")
    assert r.returncode == 2 and "--stride" in r.stderr and "Traceback" not in r.stderr
