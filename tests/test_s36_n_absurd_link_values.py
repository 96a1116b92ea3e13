"""Upper bounds on `rooflab train`'s time and size options (s36 N): `--hop-latency-us 1e30`,
`--step-ms 1e30` and `--memory 1e30GB` were taken (a step of 1e24 s, a device of 1e39
bytes); now each is a one-line error naming the option, the range and how to fix it, exit
2. The bounds: 1 s per hop (1e6 us), a day per step (86,400,000 ms), 1 PB (1e15 bytes) of memory."""

from __future__ import annotations

import pytest
from cli_inproc import one_line_error

BASE = ["train", "llama-2-7b", "--on", "H100 SXM"]


@pytest.mark.parametrize("args, words", [
    (["--dp", "4", "--hop-latency-us", "1e30"],
     ["--hop-latency-us 1e+30 is past the range", "0 to 1e+06 microseconds per ring hop"]),
    # just past 1 s a hop
    (["--dp", "4", "--hop-latency-us", "1000001"], ["--hop-latency-us 1e+06 is past"]),
    (["--tp", "2", "--link-latency", "1e30"],
     ["--link-latency 1e+30 is past the range", "microseconds per all-reduce"]),
    (["--step-ms", "1e30"], ["--step-ms 1e+30 is past the range", "86,400,000 ms"]),
    (["--memory", "1e30GB"], ["--memory 1e30GB is 1e+39 bytes, past any device's memory",
                              "e.g. --memory 80GB"]),
])
def test_absurd_value_is_a_one_line_error(capsys, args, words):
    err = one_line_error(capsys, [*BASE, *args])
    for w in words:
        assert w in err, err


def test_the_bounds_themselves_are_taken():
    """1e6 us a hop, a day's step and 1 PB are inside (inclusive): no error from the
    validators themselves."""
    from rooflab.cli.comm_options import hop_latency_s
    from rooflab.units import parse_memory

    assert hop_latency_s(1e6) == pytest.approx(1.0)
    assert parse_memory("1000000GB") == 1e15
