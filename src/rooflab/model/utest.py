"""Old home of the Mann-Whitney U test, kept so `rooflab.model.utest` imports still work.

The test lives in `model/mann_whitney.py` ("utest" read as "unit test"); import from there.
"""

# Re-exported for outside users of the old module name.
from .mann_whitney import (  # noqa: F401
    ALPHA,
    UTest,
    have_scipy,
    smallest_p,
    u_test,
)
