"""A point near the 10 % latency line says so (review r2 F6): seed 000's softmax reads 10 %
of its roof, memory-bound, on the seed's roof (1.8 TB/s) and 9.2 %, latency-bound, on an
A100's (2.039 TB/s, 1.13x higher). Either way its class turns on the roof, not the kernel."""

import re
from pathlib import Path

import pytest

from rooflab.cli.main import main

SEEDS = Path(__file__).resolve().parent.parent / "examples" / "seeds"


def _softmax_position(capsys, on: str) -> str:
    assert main(["report", str(SEEDS / "seed000.csv"), "--on", on]) == 0
    out = capsys.readouterr().out
    block = re.split(r"\n\d+\. softmax ", out, maxsplit=1)[1]   # its diagnosis block
    return " ".join(block.split("position:", 1)[1].split("\n   gain", 1)[0].split())


@pytest.mark.parametrize("on, bound, pct", [(str(SEEDS / "seed000roof.json"), "memory", "10 %"),
                                            ("A100", "latency", "9.2 %")])
def test_seed_softmax_near_the_line_says_so_on_both_roofs(capsys, on, bound, pct):
    text = _softmax_position(capsys, on)
    assert pct in text
    assert "near the 10 % line that parts latency-bound from memory- and compute-bound" in text


def test_a_point_far_from_the_line_gets_no_note(capsys):
    from types import SimpleNamespace as P

    from rooflab.model.diagnose_evidence import near_latency_line

    assert near_latency_line(P(percent_of_roof=50.0, bound="memory")) == ""
    assert near_latency_line(P(percent_of_roof=7.9, bound="latency")) == ""     # < 10/1.25
    assert near_latency_line(P(percent_of_roof=8.0, bound="latency")) != ""
    assert near_latency_line(P(percent_of_roof=12.4, bound="memory")) != ""
    assert near_latency_line(P(percent_of_roof=12.5, bound="memory")) == ""    # 10 x 1.25
    assert near_latency_line(P(percent_of_roof=None, bound="memory")) == ""
