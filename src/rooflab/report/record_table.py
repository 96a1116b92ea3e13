"""Seed 004's record table (记录表: nominal vs measured, the day's deliverable) as one list
of rows for every renderer: the terminal report, `-o x.md/.html` and `--json` (review 18a
F11: only the files had it, so the default output never named the nominal roof).

A RecordRow holds the numbers (SI units, as `unit` says) and the cells the tables print;
`record_table` builds them from the profile's two roofs (tables.profile_rows: bandwidths,
peaks, ridges, launch floor) and from the top kernels' diagnoses (achieved FLOP/s against
the nominal roof's attainable, time against its floor). Pure: the caller diagnoses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..hardware.profile import MachineProfile
from ..model import datasheet_note as sheet
from ..model.analysis import Analysis
from ..model.ceiling import Roof
from ..model.diagnose import Diagnosis
from ..model.dies import label_kind
from ..model.placement import held_on, point_on
from ..units import fmt_ai, fmt_fraction, fmt_pct, fmt_rate, fmt_seconds, fmt_times, rate_unit
from .tables import MEASURED_DERIVED, profile_notes, profile_rows

RECORD_HEADERS = ("quantity", "nominal", "measured", "measured / nominal")
RECORD_TITLE = "Record table (nominal vs measured)"
NOT_PUBLISHED = "not published"
# Measured ceilings whose samples' IQR / median exceeds this are listed under the table.
NOISY_CEILING = 0.05
# A measured compute peak under the low edge of seed 004's healthy band (70 %) of nominal
# is marked "62% (low)", and so is a GPU's DRAM bandwidth under its band's (75 %; review
# 19a N6): the bands' one home is model/datasheet_note.py, read when the table is built, so
# the mark, the probe's notes and the datasheet note move together.
LOW_MARK = "(low)"


@dataclass(frozen=True)
class RecordRow:
    """One line of the record table. nominal, measured: SI values in `unit` ("B/s",
    "FLOP/s", "OP/s", "FLOP/B", "s"), None where that roof has none (the cells say why);
    ratio is always measured / nominal. cells: the row as the tables print it (quantity,
    nominal, measured, and the last column's words, which for a kernel say the percent of
    the judging roof and the headroom to its floor too)."""

    quantity: str
    unit: str
    nominal: float | None
    measured: float | None
    cells: tuple[str, str, str, str]
    # a kernel's FLOP/s row: its percent of the judging roof, what the cell says (seed
    # 004's 记录表 "用实测屋顶算"); `ratio` stays measured / nominal (review 19a N8)
    percent_of_roof: float | None = None
    # a GPU's ridge row: the measured ridge (lowest, highest) the datasheet's ridge implies
    # for seed 004's healthy bands (datasheet_note; review r7 F3: T4 158-244, not 170-200)
    expected: tuple[float, float] | None = None

    @property
    def ratio(self) -> float | None:
        if self.nominal and self.measured is not None:
            return self.measured / self.nominal
        return None

    def to_dict(self) -> dict:
        """The `report --json` form (docs/json.md: record_table)."""
        return {"quantity": self.quantity, "unit": self.unit, "nominal": self.nominal,
                "measured": self.measured, "ratio": self.ratio, "cells": list(self.cells),
                **({"percent_of_roof": self.percent_of_roof}
                   if self.percent_of_roof is not None else {}),
                **({"expected_measured": list(self.expected)} if self.expected else {})}


def has_both_roofs(profile: MachineProfile | None) -> bool:
    """Whether the profile holds a nominal and a measured roof: the terminal report prints
    the record table then (the files and --json whenever a profile is given)."""
    return profile is not None and profile.nominal is not None and profile.measured is not None


def record_table(analysis: Analysis, profile: MachineProfile | None,
                 diags: Sequence[Diagnosis], top: int = 5) -> list[RecordRow]:
    """B, P, ridge and launch floor (nominal, measured, ratio), then two rows per top
    kernel (diags in rank order): its achieved FLOP/s against the attainable at its AI on
    the nominal roof, and its time against the floor there. [] without a profile."""
    if profile is None:
        return []
    return _roof_rows(profile) + [r for d in diags[:top] for r in _kernel_rows(analysis,
                                                                               profile, d)]


def _roof_rows(profile: MachineProfile) -> list[RecordRow]:
    from ..hardware.import_roofs import COPIED_OVERHEAD

    nominal = profile.nominal
    gpu = (profile.host or {}).get("kind") != "cpu"
    rows = []
    for r in profile_rows(profile):
        cells, measured = list(r.cells()[:4]), r.measured
        if (r.unit in ("FLOP/s", "OP/s") and r.ratio is not None
                and r.ratio < sheet.HEALTHY_COMPUTE[0]):
            cells[3] += f" {LOW_MARK}"   # the read-with-care section says why (trust_warnings)
        if (gpu and r.quantity.startswith("DRAM") and r.unit == "B/s"
                and r.ratio is not None and r.ratio < sheet.HEALTHY_BANDWIDTH[0]):
            cells[3] += f" {LOW_MARK}"
        if (r.quantity == "overhead floor" and profile.measured is not None
                and profile.measured.overhead_source == COPIED_OVERHEAD):
            # `specs import --from` copies the datasheet's launch floor (review 19a N9)
            cells[2], cells[3] = f"{cells[2]} (datasheet, not measured)", "-"
            measured = None   # --json says what the cell says
        if r.nominal is None and r.derived_method:
            # derived from measured ceilings (the real-traffic DRAM): no datasheet has it,
            # and "not published" read as a missing datasheet value (review 17a N13e); the
            # whole method follows under the table (record_notes)
            cells[1] = derived_words(r.derived_method)
        elif r.nominal is None and nominal is not None:
            # A vendor publishes peaks, not cache bandwidths (nor, for CPUs, always DRAM);
            # a ridge needs both numbers.
            level = r.quantity.rsplit("/ ", 1)[-1] if r.quantity.startswith("ridge") else ""
            missing = level and nominal.find_memory(level) is None
            # a cache ridge's short: its bandwidth row above says "not published" (and the
            # long words wrapped three such rows in 80 columns)
            cells[1] = (f"no nominal {level}" if missing and level != "DRAM" else
                        f"{NOT_PUBLISHED} (no nominal {level})" if missing else NOT_PUBLISHED)
        # a GPU's ridge row: the range a quiet machine's probe gives (a note under the
        # table says it, ridge_notes; the cells stay seed 004's four)
        # (DRAM's only: the bands are of the DRAM bandwidth, not of a cache's)
        band = _ridge_band(nominal, r.nominal) if gpu and r.quantity.startswith("ridge") \
            and r.quantity.endswith("/ DRAM") else None
        rows.append(RecordRow(r.quantity, r.unit, r.nominal, measured, tuple(cells),
                              expected=band))
    return rows


def _ridge_band(nominal: Roof | None, ridge: float | None) -> tuple[float, float] | None:
    """The measured range a datasheet ridge `ridge` (FLOP/B) implies for the healthy bands
    (datasheet_note.healthy_ridge_band; T4 fp16 tensor: 203 -> 158-244), where the roof has
    the DRAM and compute ceilings the bands are of."""
    ok = nominal is not None and ridge and nominal.compute and nominal.find_memory("DRAM")
    return sheet.healthy_ridge_band(ridge) if ok else None


def ridge_notes(profile: MachineProfile) -> list[str]:
    """Under the record table, for a GPU's datasheet ridge: the measured ridge seed 004's
    healthy bands imply, and whether the probe's is inside it. Seed 004 expects "170-200",
    which its own bands do not give (review r7 F3): a T4 probed at 52 TFLOP/s and 250 GB/s
    (ridge 208) is healthy, and the shipped t4p.json's 185 is inside 158-244."""
    out = []
    for r in _roof_rows(profile):
        if r.expected is None:
            continue
        lo, hi = r.expected
        where = ("" if r.measured is None else
                 f"; the measured {fmt_ai(r.measured)} is "
                 + ("inside it" if lo <= r.measured <= hi else "outside it: see the bandwidth "
                    "and peak rows for which side moved"))
        out.append(f"{r.quantity}: the datasheet's {fmt_ai(r.nominal)} puts a healthy measured "
                   f"ridge at {fmt_ai(lo)}-{fmt_ai(hi)} (compute "
                   f"{sheet.band_words(sheet.HEALTHY_COMPUTE)} and bandwidth "
                   f"{sheet.band_words(sheet.HEALTHY_BANDWIDTH)} of nominal, seed 004's "
                   f"bands; its \"170-200\" is narrower than they give){where}")
    return out


def _kernel_rows(analysis: Analysis, profile: MachineProfile, d: Diagnosis
                 ) -> list[RecordRow]:
    """A kernel's FLOP/s row and its time row (seed 004's decode FLOP/s, matmul FLOP/s and
    TPOT rows): the same kernel placed on the nominal roof gives the model's attainable and
    floor there."""
    p, nominal, kind = d.point, profile.nominal, label_kind(analysis.roof)   # s34 G
    nom = nom_floor = None
    nom_words = "-"
    if nominal is not None:
        k = analysis.kernel_of(p)
        there = point_on(nominal, p, k) if k is not None else None
        if there is not None:
            nom, nom_floor = there.attainable_flop_per_s, there.floor_s
            nom_words = fmt_rate(nom, p.precision)
        else:
            c = held_on(nominal, p, k).ceiling
            nom_words = f"<= {fmt_rate(c.value, c.precision)} (peak; {p.level} {NOT_PUBLISHED})"
    name = f"{p.kernel}: {rate_unit(p.precision)}"
    rate = RecordRow(name, rate_unit(p.precision), nom, p.achieved_flop_per_s,
                     (name, nom_words, fmt_rate(p.achieved_flop_per_s, p.precision),
                      "-" if p.percent_of_roof is None else   # untimed: no achieved point
                      f"{fmt_pct(p.percent_of_roof)} of the {kind} roof"),
                     percent_of_roof=p.percent_of_roof)
    # The floor on the nominal roof, the measured time, the ratio (seed 004's TPOT row);
    # the floor on the judging roof follows, since the headroom is taken against it.
    judged = ("-" if d.headroom is None else
              f"{fmt_times(d.headroom)} the {fmt_seconds(p.floor_s)} floor of the {kind} roof")
    # fmt_times: 2e-4 is '0.000198x', not the '0.00x' of no time (review s28 R2 F11)
    ratio = (f"{fmt_times(p.seconds / nom_floor)} the floor; {judged}"
             if nom_floor is not None and p.seconds else judged)
    name = f"{p.kernel}: time"
    time = RecordRow(name, "s", nom_floor, p.seconds,
                     (name, f"{fmt_seconds(nom_floor)} (floor)" if nom_floor is not None else
                      f"{NOT_PUBLISHED} (no nominal {p.level})" if nominal is not None
                      else "-", fmt_seconds(p.seconds), ratio))
    return [rate, time]


def derived_words(method: str) -> str:
    """A derived ceiling's nominal cell: its method's head ("derived from this run's
    measured DRAM rates"), the part before the first colon."""
    head = method.split(":", 1)[0].strip()
    return head if head.startswith("derived") else f"derived: {head}"


def record_notes(profile: MachineProfile | None) -> list[str]:
    """Under the record table: how its derived measured values are derived, the measured
    ridge a GPU's datasheet implies (ridge_notes), measured ceilings too noisy to lean on,
    then the roofs' notes."""
    if profile is None:
        return []
    derived = [f"{r.quantity} {MEASURED_DERIVED}: {r.derived_method}"
               for r in profile_rows(profile) if r.derived_method]
    return derived + ridge_notes(profile) + _measured_notes(profile)


def _measured_notes(profile: MachineProfile) -> list[str]:
    noisy = [f"{r.quantity} {fmt_fraction(r.spread)}" for r in profile_rows(profile)
             if r.spread is not None and r.spread > NOISY_CEILING]
    if not noisy:
        return profile_notes(profile)
    # The per-ceiling "samples vary" warnings say the same as this one line.
    notes = [n for roof in profile.roofs for n in roof.notes]
    return ([f"Measured ceilings whose samples spread more than {fmt_fraction(NOISY_CEILING)} "
             f"(IQR / median): {', '.join(noisy)}. The roof is the best sample of each; with "
             f"this much spread every % of roof moves with it: re-probe on a quiet machine "
             f"(`rooflab probe --full`)."] + list(dict.fromkeys(notes)))
