"""The one-thread roof of this dev VM's probe (AMD EPYC, Zen 4) that the many-calls and
advice tests price kernels on, as a Roof and as the JSON a roof file holds, with the
per-call floors its profile records (one home for them all)."""

from rooflab.model import Ceiling, Roof
from rooflab.model.machine import Machine

ONE_T = Roof("AMD EPYC measured (1 thread)", kind="measured",
             compute=(Ceiling(118e9, precision="fp32", unit="vector"),
                      Ceiling(59e9, precision="fp64", unit="vector")),
             memory=(Ceiling(29.3e9, level="DRAM"),), overhead_s=177e-9)
ONE_T_DICT = {"name": "AMD EPYC measured (1 thread)", "kind": "measured",
              "compute": [{"precision": "fp32", "unit": "vector", "flop_per_s": 118e9},
                          {"precision": "fp64", "unit": "vector", "flop_per_s": 59e9}],
              "memory": [{"level": "DRAM", "bytes_per_s": 29.3e9}], "overhead_s": 177e-9}
FLOORS = {"numba empty call": 177e-9, "numpy 1-element ufunc": 349e-9}
PROFILED = Machine(kind="cpu", caches={"L3": 33_554_432.0}, call_floors=FLOORS)
BARE = Machine(kind="cpu", caches={"L3": 33_554_432.0})
