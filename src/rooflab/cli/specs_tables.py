"""The tables of `rooflab specs`: list (full and compact), show, and compare rows, from
catalog devices and FileRoofs (a profile's or roof file's judging roof). Pure formatting of
the values; the commands are in cli/specs.py, which still exports these names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..units import LEVELS, fmt_ai, fmt_bytes_binary, fmt_fraction, fmt_rate, fmt_seconds, si

if TYPE_CHECKING:
    from ..model.ceiling import Roof


def kind_words(roof) -> str:
    # imported here, not at the top: `rooflab specs --help` must not load rooflab.model
    # (tests/test_s20_f5_lazy_cli.py)
    from ..model.dies import kind_words as words

    return words(roof)


def _bytes(value: float | None) -> str:
    """A memory in decimal GB from 1e9 B up (as datasheets quote it), a cache in binary
    units ('48 KiB', not '0.0469 MiB')."""
    if not value:
        return "-"
    if value >= 1e9:
        return si(value, "B")
    return fmt_bytes_binary(value)


def _watts(value: float | None) -> str:
    return "-" if value is None else f"{value:g} W"


@dataclass(frozen=True)
class FileRoof:
    """The judging roof of a profile or roof file (a profile: its measured roof, as --on
    reads it), shown beside catalog devices (review 13v F-L: a probed profile next to its
    datasheet, seed 004's nominal vs measured). It has no datasheet facts (memory size,
    caches, links, TDP): those cells say '-'."""

    path: str
    roof: Roof
    memory_bytes: float | None = None   # a profile's host.memory_bytes, where it has one
    cores: int | None = None            # the cores its probe ran on (host.threads_used/cores)
    device_kind: str | None = None      # "cpu" or "gpu": what its probe ran on, if known

    @property
    def name(self) -> str:
        return f"{self.path} ({kind_words(self.roof)})"


def _dram(d) -> float | None:
    """DRAM bandwidth, None where a file's roof has no DRAM level (a links-only roof)."""
    c = d.roof.find_memory("DRAM")
    return c.value if c is not None else None


def _fact(d, text) -> str:
    """A datasheet cell: '-' for a file's roof, which has no datasheet."""
    return "-" if isinstance(d, FileRoof) else text(d)


def list_rows(devices) -> list[list[str]]:
    from ..hardware.catalog import top_float_compute

    rows = []
    for d in devices:
        top = top_float_compute(d)
        bw = d.roof.bandwidth("DRAM").value
        rows.append([d.name, d.kind, f"{fmt_rate(top.value, top.precision)} {top.label}",
                     si(bw, "B/s"), fmt_ai(top.value / bw), si(d.memory_bytes, "B"),
                     _watts(d.tdp_w)])
    return rows


def _fixed(value: float | None, scale: float) -> str:
    """A number in a column's fixed unit (TFLOP/s, GB/s, GB): '181', '14.6', '0.253'.
    One unit per column lines devices up for comparison and keeps the cells short."""
    return "-" if value is None else fmt_ai(value / scale)


def compact_rows(devices) -> list[list[str]]:
    """The list for narrow terminals: the same facts as list_rows, units in the headers."""
    from ..hardware.catalog import top_float_compute

    rows = []
    for d in devices:
        top = top_float_compute(d)
        bw = d.roof.bandwidth("DRAM").value
        rows.append([d.name, _fixed(top.value, 1e12), top.label, _fixed(bw, 1e9),
                     fmt_ai(top.value / bw), _fixed(d.memory_bytes, 1e9),
                     "-" if d.tdp_w is None else f"{d.tdp_w:g}"])
    return rows


COMPACT_HEADERS = ["name", "TFLOP/s", "precision", "GB/s", "ridge", "GB", "W"]
COMPACT_KEY = ("top dense float peak in TFLOP/s and its precision, DRAM bandwidth in GB/s, "
               "ridge in FLOP/byte, memory in GB, TDP in W")


def _table(title: str, headers: list[str], rows: list[list[str]], right_from: int = 1,
           right_to: int = 99, compact: bool = False):
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    if rows and all(row[-1] == "-" for row in rows):  # drop an empty last column
        headers, rows = headers[:-1], [row[:-1] for row in rows]
    # Compact: a rule under the header and no other lines, two spaces between columns, so
    # a row of the longest name (34 characters) and six short cells fits in 80 columns.
    table = (Table(title=title, title_justify="left", header_style="bold",
                   box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0, 0, 1),
                   pad_edge=False)
             if compact else
             Table(title=title, title_justify="left", header_style="bold",
                   show_header=any(headers)))
    for i, h in enumerate(headers):
        # a name is never folded: `rooflab specs list | grep "H100 SXM"` must find it whole
        right = right_from <= i < right_to and not (compact and h == "precision")
        table.add_column(h, justify="right" if right else "left",
                         overflow="fold", no_wrap=(i == 0 and h == "name"))
    for row in rows:   # literal text: a method's 'a[i] = b[i]' is no markup
        table.add_row(*(escape(c) for c in row))
    return table


def list_tables(devices, width: int) -> list:
    """The full table where it fits in `width` columns; else a key line and one compact
    table per kind (a terminal, or COLUMNS, narrower than the full table; a pipe gets
    cli/common.PIPE_WIDTH, 160 columns, so it prints the full table)."""
    from rich.console import Console

    from ..hardware.catalog_fields import KINDS

    headers = ["name", "kind", "top dense peak", "DRAM", "ridge", "memory", "TDP"]
    full = _table(f"{len(devices)} devices (nominal, dense)", headers, list_rows(devices),
                  right_from=2)
    if Console(width=10_000).measure(full).maximum <= width:
        return [full]
    # the key once, above the tables; each kind gets its own table instead of a kind column
    tables: list = [f"{len(devices)} devices (nominal, dense); {COMPACT_KEY}"]
    for kind in KINDS:
        group = [d for d in devices if d.kind == kind]
        if group:
            tables.append(_table(f"{kind} ({len(group)})", COMPACT_HEADERS,
                                 compact_rows(group), right_from=1, compact=True))
    return tables


def _device_json(d) -> dict[str, Any]:
    from ..hardware.catalog import device_to_dict, roof_ridges
    from ..model.roof_schema import roof_to_dict

    if isinstance(d, FileRoof):
        # the ridges the table prints beside a file's peaks, as a catalog entry has them
        # (none without a DRAM level: review r1 F12)
        ridges = list(roof_ridges(d.roof)) if _dram(d) else []
        return {"name": d.name, "file": d.path, "roof": roof_to_dict(d.roof), "ridges": ridges}
    return {**device_to_dict(d), "roof": roof_to_dict(d.roof)}


def compare_ratios(devices) -> dict[str, Any]:
    """`specs compare --json`'s ratio column (two devices, a file among them), one row per
    figure the table divides: memory size, each level's bandwidth, each compute peak.
    `ratio` is numerator / denominator (ratio_order: measured / nominal where one roof is
    each); null where either has no figure, as the table's '-' (review r1 F12)."""
    num, den, percent = ratio_order(devices)
    a, b = devices[num], devices[den]
    figures = [] if _no_memory_ratio(devices) else [
        ("memory", "B", a.memory_bytes, b.memory_bytes)]
    for level in _levels(devices):
        mem = [(c.value if (c := d.roof.find_memory(level)) is not None else None)
               for d in (a, b)]
        figures.append((level, "B/s", *mem))
    for c in _compute_order(devices):
        peak = [(x.value if (x := d.roof.find_compute(*c)) is not None else None)
                for d in (a, b)]
        figures.append((" ".join(c), "OP/s" if c[0].startswith("int") else "FLOP/s", *peak))
    rows = [{"quantity": q, "unit": u, "numerator": x, "denominator": y,
             "ratio": x / y if x and y else None} for q, u, x, y in figures]
    return {"numerator": a.name, "denominator": b.name, "measured_over_nominal": percent,
            "rows": rows}


def _interconnect(d, short: bool = False) -> str:
    """The catalog's interconnect figure with its direction convention: vendors quote
    NVLink, xGMI, ICI and PCIe as both directions together (nvidia.toml, amd.toml), while
    the host link row beside it is per direction, so 'PCIe Gen3 x16, 32 GB/s' over '15.8
    GB/s per direction' read as two links (review s20 r3 F2). Per direction beside it:
    half, or for a PCIe card whose interconnect is its host link, that row (the derived
    rate after line coding). Unified memory is the chip's memory, no link: as it is."""
    text = f"{d.interconnect}, {si(d.interconnect_bytes_per_s, 'B/s')}"
    if getattr(d, "unified_memory", False):
        return text
    if short:
        return f"{text} both ways"
    if d.interconnect == d.host_link and d.host_link_ceiling is not None:
        return (f"{text} both directions, before line coding (per direction: the host "
                f"link below)")
    links = getattr(d, "links", None) or {}
    if links.get("mesh"):
        # a full mesh's figure is all its links: one peer gets one (review s28 R4 F1)
        one = links["link_gbps"] * 1e9
        return (f"{text} both directions, all {links['mesh']:g} links of a full mesh: one "
                f"link per peer, {si(one, 'B/s')} both directions ({si(one / 2, 'B/s')} "
                f"per direction); a ring over k GPUs gets k-1 of them")
    if links.get("die_links"):
        one = links["link_gbps"] * 1e9
        return (f"{text} both directions; one link {si(one / 2, 'B/s')} per direction: "
                f"{links['die_links']:g} join the dies of one package, 1-2 join dies of "
                f"different packages")
    return f"{text} both directions ({si(d.interconnect_bytes_per_s / 2, 'B/s')} per direction)"


def _host_link(d, short: bool = False) -> str:
    c = d.host_link_ceiling
    if c is None:
        return "-"
    if short:
        return si(c.value, "B/s")
    rate = f"{si(c.value, 'B/s')} per direction"
    return f"{d.host_link}, {rate} (derived: {c.method.split(': ')[1]})" \
        .replace(", per direction)", ")")


def _show_tables(d) -> list:
    from ..report.tables import RIDGE_MARK_NOTE, flagged, ridge_flagged, top_float_ceiling

    bw, dram = _dram(d), d.roof.find_memory("DRAM")
    # a profile's noisy ceiling, and each ridge that divides one, carry the probe table's
    # '!' (report/tables: the 5 % rule); a catalog entry's datasheet figures carry none
    marks = isinstance(d, FileRoof)

    def mark(noisy: bool) -> str:
        return " !" if marks and noisy else ""

    compute = [[c.label, fmt_rate(c.value, c.precision),
                fmt_ai(c.value / bw) + mark(ridge_flagged(c, dram)) if bw else "-",
                c.provenance + mark(flagged(c)), c.method or "-"]
               for c in d.roof.compute]
    # each memory level's ridge against the top float ceiling (the roofline's top): where
    # a kernel resident at that level turns compute-bound, one slope per level
    top = top_float_ceiling(d.roof)   # None on an integer-only roof: no FLOP/B ridge
    memory = [[c.level, si(c.value, "B/s"),
               fmt_ai(top.value / c.value) + mark(ridge_flagged(top, c))
               if top is not None and c.level in LEVELS else "-",
               c.provenance + mark(flagged(c)), c.method or "-"]
              for c in d.roof.memory]
    source = f" ({d.roof.overhead_source})" if d.roof.overhead_source else ""
    overhead = [["overhead floor", f"{fmt_seconds(d.roof.overhead_s)}{source}"
                 if d.roof.overhead_s else "- (not given)"]]
    if isinstance(d, FileRoof):
        facts = [["file", d.path], ["roof", f"{d.roof.name} ({kind_words(d.roof)})"], *overhead,
                 ["source", d.roof.source or "-"]] + [["note", n] for n in d.roof.notes]
    else:
        facts = _device_facts(d, bw) + overhead + [["source", d.source]]
        facts += [["sparse (not the roof)", f"{fmt_rate(v, k)} {k} tensor"]
                  for k, v in d.sparse.items()]
        facts += [["note", n] for n in d.notes]
    legend = [RIDGE_MARK_NOTE] if any(" !" in row[2] for row in compute + memory) else []
    return [_table(d.name, ["", ""], facts, right_from=9),
            _table("compute ceilings (dense) and ridge points against DRAM",
                   ["ceiling", "peak", "ridge FLOP/B", "provenance", "how"], compute,
                   right_to=3),
            _table("memory ceilings, ridge vs " + top.label if top is not None else
                   "memory ceilings (no float ceiling: no ridge)",
                   ["level", "bandwidth", "ridge FLOP/B", "provenance", "how"], memory,
                   right_to=3), *legend]


def _device_facts(d, bw: float) -> list[list[str]]:
    return [["vendor / kind", f"{d.vendor} / {d.kind}"],
            ["memory", f"{si(d.memory_bytes, 'B')} at {si(bw, 'B/s')}"],
            ["L2 / last-level cache", f"{_bytes(d.l2_bytes)} / {_bytes(d.llc_bytes)}"],
            ["interconnect", _interconnect(d)],
            ["host link", _host_link(d)],
            ["TDP", _watts(d.tdp_w)]]


def _levels(devices) -> list[str]:
    """The memory levels any device's roof has a ceiling for (L1, L2, L3, DRAM in that
    order), DRAM always: a probed profile's caches get a row each (review 14d L6)."""
    from ..units import LEVELS

    return [lv for lv in LEVELS if lv == "DRAM"
            or any(d.roof.find_memory(lv) is not None for d in devices)]


def _ratio(values: list[float | None], order: tuple[int, int, bool] = (0, 1, False)) -> str:
    """values[num] / values[den] ('0.92', or '84 %' when `order` asks for a percentage, as
    the record table's measured / nominal column prints it: units.fmt_fraction):
    how much of the reference a node reaches, the acceptance number; '-' where either has
    none."""
    num, den, percent = order
    a, b = values[num], values[den]
    if not a or not b:
        return "-"
    return fmt_fraction(a / b) if percent else f"{a / b:.3g}"


def ratio_order(devices) -> tuple[int, int, bool]:
    """Which device divides which in the ratio column: a measured roof over a nominal one
    as a percentage, seed 004's record-table column 实测 ÷ 标称 (measured / nominal, 84 %),
    whichever order they were named in (review 18a L6); else first / second."""
    kinds = [d.roof.kind for d in devices]
    if sorted(kinds) == ["measured", "nominal"] and kind_mismatch_note(devices) is None:
        return kinds.index("measured"), kinds.index("nominal"), True
    return 0, 1, False


def kind_mismatch_note(devices) -> str | None:
    """A CPU profile beside a GPU's datasheet (or a GPU profile beside a CPU's) measures
    another machine: its ratio is no "measured / nominal" of either (review s33 D:
    `specs compare t4 me.json` of a 2-vCPU Xeon printed DRAM 4 %, memory 158 % as the T4's
    measured share), so the column is a plain first / second ratio and this note says why."""
    files = [d for d in devices if isinstance(d, FileRoof) and d.device_kind]
    cats = [d for d in devices if not isinstance(d, FileRoof)
            and isinstance(getattr(d, "kind", None), str)]
    if len(files) != 1 or len(cats) != 1:
        return None
    f, c = files[0], cats[0]
    if (f.device_kind == "cpu") == (c.kind == "cpu"):
        return None
    return (f"{f.path} was probed on a {f.device_kind} and {c.name} is a {c.kind}: the "
            f"ratio compares two machines, not how much of its datasheet either reaches; "
            f"compare a profile with its own device's datasheet (`rooflab specs show "
            f"{f.path}` names the machine it measured)")


def _no_memory_ratio(devices) -> bool:
    """No memory-size ratio: a catalog CPU's memory is the most its sockets take (6 TB),
    no size to reach; a CPU profile's is its host's RAM, no match for a GPU's memory
    (review s33 I: `specs compare t4 me.json` printed 16 GB / 25.3 GB = 0.632)."""
    return (any(getattr(d, "kind", None) == "cpu" for d in devices)
            or kind_mismatch_note(devices) is not None)


def _compute_order(devices) -> list[tuple[str, str]]:
    """Every (precision, unit) the devices have a peak for, fp64 first, vector before tensor."""
    from ..units import PRECISIONS, UNITS

    found = {(c.precision, c.unit) for d in devices for c in d.roof.compute}
    return sorted(found, key=lambda pu: (PRECISIONS.index(pu[0]) if pu[0] in PRECISIONS
                                         else 99, UNITS.index(pu[1]) if pu[1] in UNITS else 9))


def compare_rows(devices, ratio: bool = False) -> list[list[str]]:
    """One row per fact, memory level and compute ceiling; with `ratio` (two devices) a
    last column of measured / nominal (or first / second, see ratio_order) for each row
    of figures."""
    pick = ratio_order(devices) if ratio else (0, 1, False)

    labels = [f"{p} {u}" for p, u in _compute_order(devices)]
    memory = [d.memory_bytes for d in devices]   # a FileRoof's: its host's RAM
    cpu = _no_memory_ratio(devices)
    rows = [["kind"] + [f"{kind_words(d.roof)} roof" if isinstance(d, FileRoof) else d.kind
                        for d in devices],
            ["memory"] + [si(m, "B") if m else "-" for m in memory] + (
                [_ratio(memory, pick) if not cpu else ""] if ratio else [])]
    for level in _levels(devices):
        bw = [c.value if (c := d.roof.find_memory(level)) is not None else None
              for d in devices]
        rows.append([level] + [si(v, "B/s") if v else "-" for v in bw]
                    + ([_ratio(bw, pick)] if ratio else []))
    rows += [["L2 / LLC"] + [_fact(d, lambda d: f"{_bytes(d.l2_bytes)} / "
                                               f"{_bytes(d.llc_bytes)}") for d in devices],
             # the kind with the figure: 900 GB/s of NVLink and 64 GB/s of PCIe are no
             # faster/slower versions of one thing, and a CPU's figure is its PCIe lanes
             ["interconnect"] + [_fact(d, lambda d: _interconnect(d, short=True))
                                 for d in devices],
             ["host link, 1 way"] + [_fact(d, lambda d: _host_link(d, short=True))
                                     for d in devices],
             ["TDP"] + [_fact(d, lambda d: _watts(d.tdp_w)) for d in devices]]
    if ratio:   # no figures to divide in the datasheet rows
        rows[-4:] = [row + [""] for row in rows[-4:]]
    for label in labels:
        cells, peaks = [], []
        for d in devices:
            c = d.roof.find_compute(*label.split())
            bw = _dram(d)
            ridge = f" (ridge {fmt_ai(c.value / bw)})" if c is not None and bw else ""
            cells.append("-" if c is None else f"{fmt_rate(c.value, c.precision)}{ridge}")
            peaks.append(None if c is None else c.value)
        rows.append([label] + cells + ([_ratio(peaks, pick)] if ratio else []))
    return rows


def core_count_note(devices) -> str | None:
    """A profile beside a catalog CPU probed on fewer cores than the part has: its
    "measured / nominal" reads the slice against the whole chip (a 2-vCPU VM's 3 % of an
    EPYC 9654's DRAM and fp64, review r1_docs F1), not how well the part performs."""
    files = [d for d in devices if isinstance(d, FileRoof) and d.cores]
    cpus = [d for d in devices if not isinstance(d, FileRoof)
            and isinstance(getattr(d, "inputs", {}).get("cores"), int)]
    if len(files) != 1 or len(cpus) != 1 or files[0].cores >= cpus[0].inputs["cores"]:
        return None
    from ..units import fmt_share

    f, c = files[0], cpus[0]
    share = f.cores / c.inputs["cores"]
    return (f"{f.path} was probed on {f.cores} core(s); {c.name}'s figures are for its "
            f"{c.inputs['cores']} cores: the ratios compare a {f.cores}-core slice with the "
            f"whole part (its share of the cores: {fmt_share(share)}), not how well the "
            f"part performs; compare a profile of the whole machine, or scale the compute "
            f"peaks by the share")
