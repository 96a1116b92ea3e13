"""Terminal tables for machine profiles: seed 004's record table (nominal, measured,
measured/nominal, ridge point P / B per precision against DRAM for both roofs, and the top
float ceiling's ridge against each cache level).

`profile_rows` gives the numbers and `profile_table` a rich Table (`profile_notes` the notes
under it); only the CLI prints them. The measured column is the ceiling's
value (the best sample for probes); IQR is the interquartile range of its samples relative
to their median, "!" when the ceiling carries a warning or its samples vary (flagged,
measured or derived alike); n counts the samples of the one
point the value comes from (SAMPLES_NOTE says so under the table). A nominal that is
derived (a CPU's cores x clock x lanes x FMA pipes x 2) carries DERIVED_MARK, explained
under the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware.profile import MachineProfile
from ..model.ceiling import Ceiling, Roof
from ..model.spread_warnings import samples_vary
from ..probe.stats import summarize
from ..units import fmt_ai, fmt_fraction, fmt_seconds, fmt_times, is_float, rate_unit, si

LEVEL_ORDER = ("L1", "L2", "L3", "DRAM", "PCIe", "NVLink", "network", "loopback")
PREC_ORDER = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")
HEADERS = ("quantity", "nominal", "measured", "meas/nom", "IQR", "n")
# after a measured cell whose value is derived from measured ceilings (ProfileRow.derived_method)
MEASURED_DERIVED = "(derived)"


@dataclass(frozen=True)
class ProfileRow:
    """One line of the record table. Values in SI base units (unit says which)."""

    quantity: str
    unit: str                       # "B/s", "FLOP/s", "OP/s" (integer), "FLOP/B" or "s"
    nominal: float | None
    measured: float | None
    spread: float | None = None     # interquartile range / median of the samples
    samples: int = 0
    warning: bool = False
    derived: bool = False           # the nominal is derived (cores x clock x ...), not datasheet
    # the measured value is derived from other measured ceilings, not measured itself (the
    # CPU probe's DRAM (real traffic)): its method, else ''
    derived_method: str = ""

    @property
    def ratio(self) -> float | None:
        if self.nominal and self.measured:
            return self.measured / self.nominal
        return None

    def cells(self) -> tuple[str, ...]:
        fmt = {"s": fmt_seconds, "FLOP/B": lambda v: "-" if v is None else fmt_ai(v)}.get(
            self.unit, lambda v: si(v, self.unit))
        measured = ("not measured" if self.measured is None and self.nominal is not None
                    and self.unit != "FLOP/B" else fmt(self.measured))
        if self.derived_method and self.measured is not None:
            # in the measured column but not a measurement (review 17a N13a, X1)
            measured = f"{measured} {MEASURED_DERIVED}"
        return (self.quantity, fmt(self.nominal), measured,
                fmt_fraction(self.ratio),
                fmt_fraction(self.spread, 1) + (" !" if self.warning and (
                    self.spread is not None or self.unit == "FLOP/B") else ""),
                str(self.samples) if self.samples else "-")


def bandwidth_note(kernel: str, level: str) -> str:
    """The note under a table whose achieved / % roof cells hold bandwidth (bandwidth_of)."""
    return (f"{kernel}: no FLOP, so achieved is the bytes/s it moved and % roof is of the "
            f"{level} bandwidth ceiling")


def _ordered(values, order) -> list:
    return sorted(dict.fromkeys(values), key=lambda v: (order.index(v) if v in order
                                                        else len(order), str(v)))


def _compute_keys(roofs: list[Roof]) -> list[tuple[str, str | None]]:
    keys = dict.fromkeys((c.precision, c.unit) for r in roofs for c in r.compute)
    return sorted(keys, key=lambda k: (PREC_ORDER.index(k[0]) if k[0] in PREC_ORDER
                                       else len(PREC_ORDER), str(k[1])))


def _iqr(c: Ceiling | None) -> float | None:
    if c is None or len(c.samples) < 2:
        return None
    return summarize(c.samples).iqr_rel


def flagged(c: Ceiling | None) -> bool:
    """Whether a row carries the '!': its ceiling has a warning, or its samples vary by the
    probe's rule (samples_vary) though none was written: a derived ceiling or a sweep
    plateau from a profile written before session 34 (DRAM (triad) at IQR 25 %, no '!')."""
    return c is not None and bool(c.warnings or samples_vary("", c.samples))


def ridge_flagged(compute: Ceiling | None, memory: Ceiling | None) -> bool:
    """Whether a ridge compute / memory carries the '!': it divides the two, so it is as
    noisy as either (flagged). The one rule for the probe's record table (_ridge_row) and
    `specs show`'s ridge cells of a profile (cli/specs_tables)."""
    return flagged(compute) or flagged(memory)


def _row(quantity: str, unit: str, nom: Ceiling | None, meas: Ceiling | None) -> ProfileRow:
    return ProfileRow(quantity, unit, nom.value if nom else None, meas.value if meas else None,
                      _iqr(meas), len(meas.samples) if meas else 0, flagged(meas),
                      derived=nom is not None and nom.provenance == "derived",
                      derived_method=(meas.method or "derived") if meas is not None
                      and meas.provenance == "derived" else "")


def _ridge(roof: Roof | None, prec: str, unit: str | None, level: str) -> float | None:
    if roof is None:
        return None
    c, m = roof.find_compute(prec, unit), roof.find_memory(level)
    return c.value / m.value if c and m else None


def _ridge_row(quantity: str, nom: Roof | None, meas: Roof | None, prec: str,
               unit: str | None, level: str) -> ProfileRow | None:
    """A ridge row, P / B on each roof (None where neither has both). The measured ridge
    divides two measured ceilings, so it is as noisy as either: it carries the '!' where
    its peak or its bandwidth does (flagged), with '-' for its own IQR (RIDGE_MARK_NOTE
    under the table says so). The one place ridge rows are built (probe, demo, comm
    probe; the report's record table takes its rows from here)."""
    pair = _ridge(nom, prec, unit, level), _ridge(meas, prec, unit, level)
    if pair == (None, None):
        return None
    noisy = pair[1] is not None and ridge_flagged(meas.find_compute(prec, unit),
                                                  meas.find_memory(level))
    return ProfileRow(quantity, "FLOP/B", *pair, warning=noisy)


def profile_rows(profile: MachineProfile) -> list[ProfileRow]:
    nom, meas = profile.nominal, profile.measured
    roofs = [r for r in (nom, meas) if r is not None]
    rows: list[ProfileRow] = []
    for level in _ordered([c.level for r in roofs for c in r.memory], LEVEL_ORDER):
        rows.append(_row(f"{level} bandwidth", "B/s", nom and nom.find_memory(level),
                         meas and meas.find_memory(level)))
    for prec, unit in _compute_keys(roofs):
        label = f"{prec} {unit} peak" if unit else f"{prec} peak"
        rows.append(_row(label, rate_unit(prec), nom and nom.find_compute(prec, unit),
                         meas and meas.find_compute(prec, unit)))
    levels = [lv for lv in ("DRAM",) if any(r.find_memory(lv) for r in roofs)]
    keys = _compute_keys(roofs)
    # A precision on two units (a GPU's fp64 vector and tensor) names the unit in its ridge.
    shared = {p for p, _ in keys if sum(q == p for q, _ in keys) > 1}
    for level in levels:
        for prec, unit in keys:
            name = f"{prec} {unit}" if prec in shared and unit else prec
            row = _ridge_row(f"ridge {name} / {level}", nom, meas, prec, unit, level)
            if row is not None:
                rows.append(row)
    rows += _cache_ridges(nom, meas, shared)
    if any(r.overhead_s for r in roofs):
        rows.append(ProfileRow("overhead floor", "s", nom.overhead_s if nom else None,
                               meas.overhead_s if meas else None))
    return rows


def top_float_key(nom: Roof | None, meas: Roof | None) -> tuple[str, str | None] | None:
    """The (precision, unit) of the top float ceiling, the measured roof's where it has
    one (the roof kernels are judged on), else the nominal's; None without a float one."""
    for roof in (meas, nom):
        top = top_float_ceiling(roof)
        if top is not None:
            return top.precision, top.unit
    return None


def top_float_ceiling(roof: Roof | None) -> Ceiling | None:
    """Roof.top_float_compute(), the top of the roofline the per-level ridges are taken
    against (the record table's and `specs show`'s), or None on a roof without a float
    ceiling: integer TOPS over bytes is no FLOP/B ridge (top_float_compute would give the
    fastest integer ceiling there)."""
    if roof is None or not roof.compute:
        return None
    top = roof.top_float_compute()
    return top if is_float(top.precision) else None


def _cache_ridges(nom: Roof | None, meas: Roof | None, shared: set[str]) -> list[ProfileRow]:
    """The ridge of the top float ceiling against each cache level either roof has (L1,
    L2, L3): where a cache-resident kernel turns compute-bound, one slope per level (seeds
    000/004). DRAM's ridges, one per precision, come before these."""
    key = top_float_key(nom, meas)
    if key is None:
        return []
    prec, unit = key
    name = f"{prec} {unit}" if prec in shared and unit else prec
    rows = []
    for level in (lv for lv in LEVEL_ORDER[:3]
                  if any(r is not None and r.find_memory(lv) for r in (nom, meas))):
        row = _ridge_row(f"ridge {name} / {level}", nom, meas, prec, unit, level)
        if row is not None:
            rows.append(row)
    return rows


def profile_notes(profile: MachineProfile) -> list[str]:
    """Warnings of measured ceilings, the roofs' notes, and what the GPU probe could not
    measure (skipped) or where a stage failed, without repeats."""
    out: list[str] = []
    for roof in profile.roofs:
        for c in tuple(roof.compute) + tuple(roof.memory):
            out.extend(c.warnings)
        out.extend(roof.notes)
    gpu = profile.extras.get("gpu") or {}
    for stage, tb in (gpu.get("errors") or {}).items():
        last = next((ln.strip() for ln in reversed(str(tb).splitlines()) if ln.strip()), "")
        out.append(f"stage '{stage}' failed ({last}); the other stages ran — the traceback "
                   f"is in the profile's extras.gpu.errors")
    triad = triad_note(profile)
    if triad:
        out.append(triad)
    skipped = gpu.get("skipped") or {}
    if skipped:
        out.append("not measured: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()))
    return list(dict.fromkeys(out))


def triad_note(profile: MachineProfile) -> str | None:
    """The GPU probe's triad beside its copy (review 18a F6): seed 000 §3.1 takes the triad
    as the roof and expects it 5-10 % under the copy; rooflab's DRAM is the best copy, so
    the note gives the ratio and says how to judge a kernel on the triad instead. The ratio
    is best call to best call: the triad's roof is its median call, and a median over a
    best read 0.54x on a loaded CPU where the bests were 0.995x (s37 H)."""
    from ..probe.gpu.memory import SEED_TRIAD_RATIO, TRIAD

    m = profile.measured
    triad = m.find_memory(TRIAD) if m is not None else None
    copy = m.find_memory("DRAM") if m is not None else None
    if triad is None or copy is None:
        return None
    lo, hi = SEED_TRIAD_RATIO
    best = max(triad.samples) if triad.samples else None
    ratio = (triad.value if best is None else best) / copy.value
    # the range is said either way: a reader sees how far inside or outside it the ratio is
    # one 'x' for the range, each end by the ratio rule: '0.90-0.95x'
    band = f"{fmt_times(lo).removesuffix('x')}-{fmt_times(hi)} seed 000 §3.1 expects"
    verdict = f"inside the {band}" if lo <= ratio <= hi else f"outside the {band}"
    # a profile without the triad's calls has only its median to give: said as such
    said = (f"{si(triad.value, 'B/s')} (median call; no calls kept to take its best)"
            if best is None else f"{si(best, 'B/s')} (best call)")
    roof = "" if best is None else f"; its roof is its median call, {si(triad.value, 'B/s')}"
    return (f"{TRIAD} {said} = {fmt_times(ratio)} the DRAM copy {si(copy.value, 'B/s')} "
            f"(best call), {verdict}{roof}; kernels are judged on the copy; give a kernel the "
            f"level '{TRIAD}' to judge it on the triad, seed 000's roof")


def byte_model_note(profile: MachineProfile) -> str | None:
    """How the measured bandwidths count bytes, in one line, when the probe's method says
    (the CPU probe's STREAM kernels): another tool counting write-allocate traffic reads a
    different number for the same run, so the table must say which convention it uses."""
    from ..probe.cpu.bandwidth import STREAM

    for c in profile.measured.memory if profile.measured else ():
        model = next((part for part in c.method.split("; ") if "write-allocate" in part), "")
        if c.provenance != "measured" or not model:
            continue
        words = c.method.split()
        k = STREAM.get(words[1]) if words[:1] == ["STREAM"] and len(words) > 1 else None
        if k is None:
            return f"bandwidth bytes: {model}"
        # a write-allocate cache reads each stored line before writing it: +8 B per store
        allocated = k.bytes_per_element + 8 * k.stores
        return (f"bandwidth bytes: STREAM {k.name} ({k.formula}) counts "
                f"{k.bytes_per_element} B per element, {model}; counting the write-allocate "
                f"read too, it moves {allocated} B")
    return None


DERIVED_MARK = "*"   # on a nominal cell that is derived, not a datasheet figure


def derived_note(profile: MachineProfile) -> str | None:
    """What the DERIVED_MARK on nominal cells means: the formula with its numbers and whose
    clock it uses. The CPU probe derives its nominal at the clock it measured itself, so
    measured/nominal near 100 % shows the FMA-pipe model is right, not that the chip reaches
    its rated clock; the rated clock follows where the catalog or the CPU's name gives it."""
    from ..hardware.cpu_arch import add_pipes_note
    from ..hardware.cpu_nominal import rated_clock

    nom = profile.nominal
    derived = [c for c in (nom.compute + nom.memory if nom else ()) if c.provenance == "derived"]
    if not derived:
        return None
    first = derived[0]
    text = (f"{DERIVED_MARK} derived, not a datasheet figure: {first.label} = "
            f"{first.method or first.source}")
    # Zen's FADD pipes: a kernel mixing adds with FMAs may pass this peak legitimately
    adds = add_pipes_note(first.method)
    tail = f"; {adds}" if adds else ""
    if "clock measured by the probe" not in nom.source:
        return text + tail
    rated = rated_clock(str(profile.host.get("cpu_model") or ""))
    return (f"{text}, at the probe's own measured clock, so meas/nom tests the FMA-pipe "
            f"model, not the rated clock; rated clock: "
            + (rated.words() if rated else "not known (the catalog has no entry for this "
               "CPU and its name states no GHz)") + tail)


SAMPLES_NOTE = ("n: samples behind the measured value, of the chosen point only (one "
                "working set, one kernel), not of the whole sweep")


def samples_note(profile: MachineProfile) -> str | None:
    """What the n column counts, when a measured row has samples: the DRAM figure's 5 is
    five samples of the one working set the plateau rule chose, beside a peak kernel's
    hundreds, not a count of the sizes swept (F-L5)."""
    if any(row.samples for row in profile_rows(profile)):
        return SAMPLES_NOTE
    return None


# the legend line under a table with a marked ridge row (_ridge_row)
RIDGE_MARK_NOTE = ("!: a measured ceiling whose samples vary over 5 % or that carries a "
                   "warning; a ridge marked ! divides a marked peak or bandwidth and inherits "
                   "its spread: read it no surer than they are")


def ridge_mark_note(profile: MachineProfile) -> str | None:
    """RIDGE_MARK_NOTE where a ridge row carries the '!' (a measured ridge of a noisy
    ceiling), else None."""
    if any(r.unit == "FLOP/B" and r.warning for r in profile_rows(profile)):
        return RIDGE_MARK_NOTE
    return None


def profile_table(profile: MachineProfile, title: str | None = None):
    """A rich Table: nominal, measured, measured/nominal and ridge per precision; under it
    the roofs' names, what a derived nominal is (derived_note), for measured
    bandwidths their byte model, and what n counts (samples_note)."""
    from rich.table import Table

    nom, meas = profile.nominal, profile.measured
    caption = " | ".join(f"{k}: {r.name}" for k, r in (("nominal", nom), ("measured", meas))
                         if r is not None)
    for note in (derived_note(profile), byte_model_note(profile), samples_note(profile),
                 ridge_mark_note(profile)):
        if note:
            caption = f"{caption}\n{note}" if caption else note
    from rich.markup import escape

    caption = escape(caption)   # rich would take 'a[i] = b[i]' for markup and drop '[i]'
    table = Table(title=title or profile.name, caption=caption, caption_justify="left")
    for i, h in enumerate(HEADERS):
        table.add_column(h, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for row in profile_rows(profile):
        cells = list(row.cells())
        if row.derived and row.nominal is not None:
            cells[1] = f"{cells[1]} {DERIVED_MARK}"
        table.add_row(*cells, style="yellow" if row.warning else None)
    return table
