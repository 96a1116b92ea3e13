"""specs import takes a scalar (one-lane) compute ceiling typed in, as the probe now measures
one (review s19 f3: '@scalar' was refused)."""

import pytest

from rooflab.errors import InputError
from rooflab.hardware.import_roofs import typed_ceiling


def test_typed_scalar_ceiling_keeps_its_unit_and_value():
    c = typed_ceiling("--fp64", "25GFLOP/s@scalar", measured=False)
    assert (c.precision, c.unit, c.value) == ("fp64", "scalar", 25e9)


def test_unknown_unit_names_all_three():
    with pytest.raises(InputError, match="scalar .*vector .*tensor"):
        typed_ceiling("--fp64", "25GFLOP/s@simd", measured=False)
