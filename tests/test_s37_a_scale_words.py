"""`rooflab scale` says what its all-reduce count counts (s37 A, a first user's walk).

`scale --hidden 4096 --blocks 32` printed "one all-reduce per layer: 128 per step" beside
"32 blocks", which read as a wrong count: the 128 are linear layers, 4 a block (QKV, output,
MLP in and MLP out), each all-reduced on its own.
"""

from __future__ import annotations

from cli_inproc import run_cli


def _text(*args: str) -> str:
    r = run_cli("scale", "--on", "H100 SXM", *args)
    assert r.returncode == 0, r.stderr
    return " ".join(r.stdout.split())


def test_all_reduce_count_names_linear_layers():
    """32 blocks x 4 linear layers = 128 all-reduces a step (and 4 blocks: 16)."""
    text = _text("--hidden", "4096", "--blocks", "32", "--tokens", "4096")
    assert "one all-reduce per linear layer: 128 per step" in text
    assert "MLP h x 4h and 4h x h: 4 linear layers, each all-reduced on its own" in text
    small = _text("--hidden", "1024", "--blocks", "4", "--tokens", "512")
    assert "one all-reduce per linear layer: 16 per step" in small


def test_latency_total_names_linear_layers():
    """At 8 GPUs and 10 us a hop: 2 x 7 = 14 hops x 10 us = 140 us an all-reduce, x 16
    all-reduces (4 blocks x 4 linear layers) = 2.24 ms a step."""
    text = _text("--hidden", "1024", "--blocks", "4", "--tokens", "512",
                 "--hop-latency-us", "10")
    assert ("all-reduce latency 140 us = 14 hops x 10 us, x 16 all-reduces per step "
            "(one per linear layer) = 2.24 ms") in text
