"""A Kernel's timing samples, checked as its `seconds` is. Pure."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..errors import InputError


def timing_samples(given: Iterable[float], name: str) -> tuple[float, ...]:
    """The samples as a tuple of seconds, each a plain number > 0 and finite, as a
    Kernel's `seconds` must be; else an InputError naming the kernel and the sample. A NaN
    made compare's U test raise a bare ValueError inside a property, and samples of 0 or
    -1 ms were tested as the fastest: nine -1 ms samples read '+1.2 %, outside noise'
    (review s20 r2 F3). Ingest drops zero-time launches before they get here."""
    samples = tuple(given)
    for i, x in enumerate(samples):
        if type(x) is float and 0 < x < math.inf:   # the common case, by the thousand
            continue
        try:
            v = math.nan if isinstance(x, (bool, str)) else float(x)
        except (TypeError, ValueError):
            v = math.nan
        except OverflowError:   # 10**400
            v = math.inf
        if not 0 < v < math.inf:
            raise InputError(f"kernel '{name}': field 'samples': each timing sample must be "
                             f"a number of seconds > 0 and finite; samples[{i}] is {x!r:.40}")
    return samples
