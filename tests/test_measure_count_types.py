"""rooflab.measure refuses text and booleans for flop= and bytes=, as Kernel does.

float() accepts "12", b"12" and True, so a count read from a file or a command line and
left unconverted used to pass silently as 12 (or 1) FLOP/bytes.
"""

from __future__ import annotations

import pytest

import rooflab
from rooflab.errors import InputError
from rooflab.measuring import Measurement


def _never_called():
    raise AssertionError("the kernel ran although its counts were bad")


@pytest.mark.parametrize("bad", ["12", "1e6", b"12", True, False])
@pytest.mark.parametrize("field", ["flop", "bytes"])
def test_measure_refuses_text_and_bools(field, bad):
    counts = {"flop": 10.0, "bytes": 12.0, field: bad}
    with pytest.raises(InputError, match=rf"measure\(\): {field} must be a number; got "):
        rooflab.measure(_never_called, name="x", plan="quick", **counts)


@pytest.mark.parametrize("field,mapping", [("flop", {"fp32": "10"}),
                                           ("bytes", {"DRAM": "12"}),
                                           ("bytes", {"L2": True})])
def test_measure_refuses_text_inside_a_mapping(field, mapping):
    counts = {"flop": 10.0, "bytes": 12.0, field: mapping}
    with pytest.raises(InputError, match=rf"{field}\[\w+\] must be a number"):
        rooflab.measure(_never_called, name="x", plan="quick", **counts)


def test_the_block_and_decorator_forms_refuse_them_too():
    with pytest.raises(InputError, match="bytes must be a number; got '12'"):
        Measurement(name="block", flop=1.0, bytes="12")


def test_real_numbers_of_any_numeric_type_still_pass():
    np = pytest.importorskip("numpy")
    m = Measurement(name="ok", flop=np.int64(10), bytes={"dram": np.float32(12.0)},
                    clock=iter([0.0, 1e-3]).__next__)
    with m:
        pass
    assert m.kernel.flop == {"fp32": 10.0} and m.kernel.bytes == {"DRAM": 12.0}
