"""The probe's record table says how its bandwidths count bytes.

The CPU probe counts STREAM triad as 24 B per element (explicit loads and stores, no
write-allocate, as STREAM and likwid do); the JSON's ceiling `method` said so, the table
did not, and a reader comparing with a tool that counts write-allocate traffic (32 B)
saw a 4/3 gap with no explanation.
"""

from __future__ import annotations

from rich.console import Console

from rooflab.hardware.profile import MachineProfile
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.probe.cpu.bandwidth import BYTE_MODEL
from rooflab.report.tables import byte_model_note, profile_table

# as probe/cpu/suite.py writes a measured bandwidth's method
TRIAD = (f"STREAM triad a[i] = b[i] + s*c[i] (numba), 2 threads, working set 256 MiB per "
         f"thread (512 MiB total), plateau 64 MiB..1 GiB per thread; {BYTE_MODEL}; "
         f"value = best sample")
NOMINAL = Roof("EPYC", "nominal", compute=(Ceiling(118e9, precision="fp64", unit="vector"),))


def _profile(*memory: Ceiling) -> MachineProfile:
    measured = Roof("EPYC measured", "measured",
                    compute=(Ceiling(110e9, precision="fp64", unit="vector",
                                     provenance="measured"),),
                    memory=memory)
    return MachineProfile(host={"name": "test"}, nominal=NOMINAL, measured=measured)


def _printed(table) -> str:
    console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    return " ".join(console.export_text().split())   # the caption wraps at the table's width


def test_a_measured_bandwidth_gets_its_byte_model_under_the_table():
    dram = Ceiling(49.8e9, level="DRAM", provenance="measured", method=TRIAD,
                   samples=(49.1e9, 49.8e9, 48.7e9))
    profile = _profile(dram)
    note = byte_model_note(profile)
    assert note == ("bandwidth bytes: STREAM triad (a[i] = b[i] + s*c[i]) counts 24 B per "
                    "element, explicit loads + stores, no write-allocate (STREAM/likwid "
                    "convention); counting the write-allocate read too, it moves 32 B")
    text = _printed(profile_table(profile))
    assert "24 B per element" in text and "no write-allocate" in text
    assert "a[i] = b[i] + s*c[i]" in text   # not taken for rich markup
    # under the table: after its last row
    assert text.index("24 B per element") > text.index("fp64 vector peak")


def test_no_note_without_a_measured_bandwidth_or_a_byte_model():
    assert byte_model_note(_profile()) is None
    gpu = Ceiling(3.9e12, level="DRAM", provenance="measured",
                  method="device copy of 1024 MiB fp32 (torch copy_), best of 20")
    assert byte_model_note(_profile(gpu)) is None
    assert "per element" not in _printed(profile_table(_profile(gpu)))
    nominal_only = MachineProfile(host={"name": "t"}, nominal=NOMINAL)
    assert byte_model_note(nominal_only) is None
