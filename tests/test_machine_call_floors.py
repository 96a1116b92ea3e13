"""The report's machine carries the probe's per-call floors (extras.overhead), so a loop of
small numpy calls is priced at a numpy call's cost, not the numba no-op floor (review r5 F3:
349 ns vs 177 ns on the dev VM)."""

from dataclasses import replace

from rooflab.hardware.profile import MachineProfile
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.report.markdown import machine_for

ROOF = Roof("probe", "measured", compute=(Ceiling(118e9, precision="fp64", unit="vector"),),
            memory=(Ceiling(29.3e9, level="DRAM"),))


def _profile(extras):
    return MachineProfile(host={}, measured=ROOF, extras=extras)


def test_machine_for_reads_the_probe_call_floors():
    analysis = analyze(ROOF, [Kernel("k", {"fp64": 1e6}, {"DRAM": 1e6}, seconds=1e-3)])
    extras = {"overhead": {"numba empty call": {"seconds": 1.77e-7, "best_s": 1.69e-7},
                           "numpy call": {"seconds": 3.49e-7}, "bad": "x"}}
    m = machine_for(analysis, _profile(extras))
    assert dict(m.call_floors) == {"numba empty call": 1.77e-7, "numpy call": 3.49e-7}
    assert dict(machine_for(analysis, _profile({})).call_floors) == {}
    assert dict(machine_for(analysis, None).call_floors) == {}
    assert replace(m, call_floors={}).call_floors == {}
