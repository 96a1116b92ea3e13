"""The profiler verbs' roof line taken apart: where the roof came from (`roof_source`), and
the warnings and notes ingest.profile_import.choose_roof appends to that line (another
device's roof, a measured peak above nominal, kernels run below the catalog's clock,
recorded peaks not added, the compute ceilings scaled to the recorded clock). In `--json`
those go to `notes` and to stderr: a dashboard found the wrong-device warning only by
substring-matching a field named "source" (review r1 F10). The terminal still prints the
whole line, warnings included, as it always has.
"""

from __future__ import annotations

import re

from ..ingest.profile_import import ProfileImport, RoofChoice

# where choose_roof appends a warning or note to the roof line ('; warning: ...')
_MARK = re.compile(r"; (?=(?:warning|note): )")


def _known_parts(choice: RoofChoice, imp: ProfileImport) -> list[str]:
    """The appended texts choose_roof words from these same inputs, each whole: the clock
    note holds '; ' of its own, so splitting the line on '; ' alone would cut it."""
    from ..hardware.rocprof_roofline import above_nominal_line
    from ..ingest.profile_checks import clock_mismatch, device_mismatch
    from ..model.roof_schema import SCALED

    roof = choice.roof
    # the note of a catalog roof scaled to the recorded clock (profile_checks.
    # at_recorded_clock) is the roof's own
    scaled = [f"; note: {n}" for n in roof.notes if n.startswith(SCALED)]
    return [p for p in (device_mismatch(roof, imp.kernels), above_nominal_line(roof),
                        clock_mismatch(roof, imp.clock_hz), *scaled) if p]


def split_roof_source(choice: RoofChoice, imp: ProfileImport) -> tuple[str, list[str]]:
    """(the roof line alone, its warnings and notes in the line's order, each a line of its
    own beginning 'warning: ' or 'note: ')."""
    line, found = choice.source, []
    for part in _known_parts(choice, imp):
        if part in line:
            line = line.replace(part, "", 1)
            found.append(part)
    # the rest appended with a mark (the recorded peaks of another device, not added)
    head, *rest = _MARK.split(line)
    found += [f"; {r}" for r in rest]
    found.sort(key=choice.source.find)
    return head, [p.removeprefix("; ") for p in found]


def profile_judged(profile, roofs, judged):
    """The --on profile with its nominal roof as the kernels are judged on it (a catalog
    GPU's compute ceilings at the SM clock ncu recorded: cli/inputs_roofs._roof_notes), so the
    record table and the read-with-care line use the nominal the chart and the analysis
    use (review s26 v2 F7: 140 GFLOP/s read 62 % of a 228 boost peak in the table and 90 %
    of the chart's 156 at 1.62 GHz)."""
    from dataclasses import replace

    if profile is None or profile.nominal is None:
        return profile
    scaled = next((j for r, j in zip(roofs, judged, strict=True)
                   if r is not j and r == profile.nominal), None)
    return profile if scaled is None else replace(profile, nominal=scaled)
