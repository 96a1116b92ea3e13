"""The helpers that repeated code was folded into (session 37 E): one rule each where two
modules had the same lines (CUDA's and HIP's occupancy, likwid's and perf's standard input,
measure()'s keep= and samples=, the label boxes' separating axes)."""

from __future__ import annotations

import io

import pytest

from rooflab.errors import InputError
from rooflab.files import STDIN_NAME, read_with_stdin
from rooflab.measure_checks import whole_or_none
from rooflab.model.occupancy import binding_limits, resident, round_up
from rooflab.report.boxes import _edge_normals


def test_resident_is_the_least_limit_and_ties_all_bind():
    """warps 8, registers None (no limit), shared memory 4, blocks 4: resident min(8, 4, 4)
    = 4 blocks, and both limits at 4 bind, in the order given; no limit set at all has no
    resident count (min of nothing)."""
    limits = {"warps": 8, "registers": None, "shared_memory": 4, "blocks": 4}
    assert resident(limits) == 4
    assert binding_limits(limits) == ("shared_memory", "blocks")
    assert binding_limits({"waves": 8, "vgprs": 2, "sgprs": None, "lds": 3}) == ("vgprs",)
    with pytest.raises(ValueError):
        resident({"registers": None})


def test_round_up_to_the_granule():
    """65 registers x 32 lanes = 2080 rounds up to 9 x 256 = 2304; 2048 stays; 0 is 0."""
    assert (round_up(65 * 32, 256), round_up(2048, 256), round_up(0, 256)) == (2304, 2048, 0)


def test_read_with_stdin_names_the_pipe_and_passes_options(monkeypatch):
    """`-` among the files: the reader gets <stdin> in its place, the pipe's text as stdin=
    and the verb's own options (precision=fp32); without `-` stdin=None."""
    seen = []

    def load(paths, stdin=None, precision=None):
        seen.append((paths, stdin, precision))
        return len(paths)

    monkeypatch.setattr("sys.stdin", io.StringIO("a,b\n1,2\n"))
    assert read_with_stdin(load, ["x.csv", "-"], precision="fp32") == 2
    assert read_with_stdin(load, ["y.csv"]) == 1
    assert seen == [(["x.csv", STDIN_NAME], "a,b\n1,2\n", "fp32"), (["y.csv"], None, None)]


def test_whole_or_none_refuses_what_is_no_count():
    """None stays None, 3 is 3; True (an int to Python, no count), 0, 2.0 and '3' are refused
    with the caller's words and what was given."""
    assert whole_or_none(None, "n") is None
    assert whole_or_none(3, "n") == 3
    for bad, shown in ((True, "True"), (0, "0"), (2.0, "2.0"), ("3", "'3'")):
        with pytest.raises(InputError, match=rf"^keep must be 1 or more; got {shown}$"):
            whole_or_none(bad, "keep must be 1 or more")


def test_edge_normals_pass_over_an_edge_of_no_length():
    """The triangle (0,0) (4,0) (4,3) with (4,3) given twice: edges (0,0)->(4,0) normal
    (0-0, 4-0) = (0, 4), length 4; (4,0)->(4,3) normal (0-3, 4-4) = (-3, 0), length 3; the
    repeated corner's edge has none and is left out; (4,3)->(0,0) normal (3-0, 0-4) =
    (3, -4), length 5."""
    tri = ((0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (4.0, 3.0))
    assert list(_edge_normals(tri)) == [(0.0, 4.0, 4.0), (-3.0, 0.0, 3.0), (3.0, -4.0, 5.0)]
