"""A decorated function given flop= and bytes= that returns a generator did none of its work
in the timed call: it read 8.73 us at 401 % of its roof under `bench --run` (review s26 v3
F1). It is refused as rooflab.measure(fn) refuses it, and nothing is recorded."""

from __future__ import annotations

import pytest

import rooflab
from rooflab.errors import InputError


def test_a_returned_generator_is_refused_with_given_counts():
    @rooflab.measure(flop=1e6, bytes=1e6)
    def squares(n):
        return (i * i for i in range(n))

    with pytest.raises(InputError, match=r"squares' returned a lazy iterator "
                                         r"\(generator\), so nothing is computed"):
        squares(1000)
    assert len(squares.runs) == 0


def test_a_list_is_timed_as_before():
    @rooflab.measure(flop=1e6, bytes=1e6)
    def squares(n):
        return [i * i for i in range(n)]

    assert squares(1000)[-1] == 999 * 999
    assert len(squares.runs) == 1 and squares.runs[0].seconds > 0
