"""rooflab specs — list, show and compare the nominal (datasheet) hardware catalog."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer

from ..units import fmt_ai, fmt_rate, fmt_seconds, si

if TYPE_CHECKING:
    from ..model.ceiling import Roof

HELP = """Datasheet roofs of GPUs, accelerators and CPUs (nominal; CPU peaks are derived from
cores x clock x SIMD lanes x FMA pipes x 2).

Examples:
  rooflab specs list --kind gpu
  rooflab specs show h200
  rooflab specs compare a100 h100 h200 --json
  rooflab specs compare t4 me.json   (a profile: its measured roof)
  rooflab specs show ert.json   (ERT's roofline.json, as --on reads it)
  rooflab specs import triad.txt@DRAM peak.txt -o roof.json   (likwid-bench)
  rooflab specs import --dram 83GB/s --fp64 355GFLOP/s -o roof.json
  rooflab specs import --from T4 --dram 270GB/s --fp16 50TFLOP/s@tensor
    (a profile: T4's datasheet nominal, the typed numbers measured)"""


def _bytes(value: float | None) -> str:
    if not value:
        return "-"
    if value >= 1e9:
        return si(value, "B")
    return f"{value / 2**20:.3g} MiB"


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

    @property
    def name(self) -> str:
        return f"{self.path} ({self.roof.kind})"


def _entry(name: str):
    """A catalog device, or a FileRoof for a name that looks like a file."""
    from ..hardware.catalog import lookup
    from ..hardware.resolve import load_roofs, looks_like_file, split_threads

    if not looks_like_file(name) and split_threads(name) is None:
        return lookup(name)
    roofs = load_roofs(name)
    if not roofs:
        from ..errors import InputError

        raise InputError(f"'{name}' holds no roof; give a catalog name (`rooflab specs "
                         f"list`) or a profile from `rooflab probe`")
    return FileRoof(name, roofs[0], _host_memory(name))


def _host_memory(name: str) -> float | None:
    """host.memory_bytes of a probed profile (its RAM, recorded by the probe), else None."""
    from ..files import load_json
    from ..hardware.resolve import split_threads
    from ..model.schema import profile_part

    path = split_threads(name)[0] if split_threads(name) else name
    if not path.lower().endswith(".json"):
        return None
    profile = profile_part(load_json(path))
    got = ((profile or {}).get("host") or {}).get("memory_bytes")
    return float(got) if isinstance(got, (int, float)) and got > 0 else None


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
    table per kind (a narrow terminal or a pipe, which rich gives 80 columns)."""
    from rich.console import Console

    from ..hardware.catalog import KINDS

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
    from ..hardware.catalog import device_to_dict
    from ..model.schema import roof_to_dict

    if isinstance(d, FileRoof):
        return {"name": d.name, "file": d.path, "roof": roof_to_dict(d.roof)}
    return {**device_to_dict(d), "roof": roof_to_dict(d.roof)}


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
    bw = _dram(d)
    compute = [[c.label, fmt_rate(c.value, c.precision), fmt_ai(c.value / bw) if bw else "-",
                c.provenance, c.method or "-"]
               for c in d.roof.compute]
    memory = [[c.level, si(c.value, "B/s"), c.provenance, c.method or "-"]
              for c in d.roof.memory]
    source = f" ({d.roof.overhead_source})" if d.roof.overhead_source else ""
    overhead = [["overhead floor", f"{fmt_seconds(d.roof.overhead_s)}{source}"
                 if d.roof.overhead_s else "- (not given)"]]
    if isinstance(d, FileRoof):
        facts = [["file", d.path], ["roof", f"{d.roof.name} ({d.roof.kind})"], *overhead,
                 ["source", d.roof.source or "-"]] + [["note", n] for n in d.roof.notes]
    else:
        facts = _device_facts(d, bw) + overhead + [["source", d.source]]
        facts += [["sparse (not the roof)", f"{fmt_rate(v, k)} {k} tensor"]
                  for k, v in d.sparse.items()]
        facts += [["note", n] for n in d.notes]
    return [_table(d.name, ["", ""], facts, right_from=9),
            _table("compute ceilings (dense) and ridge points against DRAM",
                   ["ceiling", "peak", "ridge FLOP/B", "provenance", "how"], compute,
                   right_to=3),
            _table("memory ceilings", ["level", "bandwidth", "provenance", "how"], memory,
                   right_to=2)]


def _device_facts(d, bw: float) -> list[list[str]]:
    return [["vendor / kind", f"{d.vendor} / {d.kind}"],
            ["memory", f"{si(d.memory_bytes, 'B')} at {si(bw, 'B/s')}"],
            ["L2 / last-level cache", f"{_bytes(d.l2_bytes)} / {_bytes(d.llc_bytes)}"],
            ["interconnect", f"{d.interconnect}, {si(d.interconnect_bytes_per_s, 'B/s')}"],
            ["host link", _host_link(d)],
            ["TDP", _watts(d.tdp_w)]]


def _profile_dict(name: str, flag: str) -> dict:
    """A probed profile's JSON for --threads/--sweep, which read its extras."""
    from ..errors import InputError
    from ..files import load_json
    from ..hardware.resolve import looks_like_file

    if not looks_like_file(name):
        raise InputError(f"{flag} reads a probed profile (.json from `rooflab probe`); "
                         f"'{name}' is a catalog name: give the profile file, e.g. "
                         f"`rooflab specs show me.json {flag}`")
    data = load_json(name)
    if not isinstance(data, dict) or not ("measured" in data or "nominal" in data):
        raise InputError(f"{name}: not a rooflab profile (no 'measured' or 'nominal' roof); "
                         f"{flag} reads the JSON `rooflab probe -o` writes")
    return data


def _threads_entry(name: str, threads: int) -> FileRoof:
    """specs show me.json --threads N: the profile's roof at N threads."""
    from ..errors import InputError
    from ..hardware.profile import roof_at_threads
    from ..hardware.resolve import split_threads

    if split_threads(name) is not None:
        path, n = split_threads(name)
        raise InputError(f"'{name}' names a thread count already; give it once: `rooflab "
                         f"specs show {path} --threads {n}` or `rooflab specs show {name}`")

    return FileRoof(name, roof_at_threads(_profile_dict(name, "--threads"), threads, name))


def _show_sweep(name: str, threads: int | None, output: str | None, json_out: bool) -> None:
    """specs show me.json --sweep [-o ws.png] [--json]: the working-set staircase."""
    from ..errors import InputError
    from ..model.schema import SCHEMA_VERSION
    from ..report.sweep_chart import (
        marker_line,
        plot_sweep,
        sweep_table,
        sweep_to_json,
        table_headers,
        table_rows,
    )
    from .common import console, emit_json

    if threads is not None:
        raise InputError("--sweep shows the sweep of the full probe (its largest thread "
                         "count); drop --threads")
    if output is not None and not output.lower().endswith((".png", ".svg")):
        raise InputError(f"-o with --sweep writes a chart and must end in .png or .svg; got "
                         f"'{output}' (--json prints the table)")
    if output is not None:
        from ..files import check_writable
        from .common import refuse_input_as_output

        refuse_input_as_output(output, [name])
        check_writable(output)
    table = sweep_table(_profile_dict(name, "--sweep"), name)
    if output is not None:
        from ..report.chart import save_figure

        save_figure(plot_sweep(table), output)   # titled with the machine, not the file
    if json_out:
        emit_json({"schema_version": SCHEMA_VERSION, "file": name,
                   "sweep": sweep_to_json(table)})
        return
    out = console()
    threads_text = f", {table.threads} threads" if table.threads else ""
    star = ("; * = the point the level's ceiling was read at"
            if any(r.chosen for r in table.rows) else "")
    out.print(_table(f"{name}: {table.kernel} bandwidth vs working set ({table.source}"
                     f"{threads_text}){star}", table_headers(table), table_rows(table),
                     right_from=0, right_to=len(table_headers(table)) - 1))
    if table.markers:
        out.print(marker_line(table))
    for note in table.notes:
        out.print(f"note: {note}")
    if output is not None:
        out.print(f"wrote {output}")


def _levels(devices) -> list[str]:
    """The memory levels any device's roof has a ceiling for (L1, L2, L3, DRAM in that
    order), DRAM always: a probed profile's caches get a row each (review 14d L6)."""
    from ..units import LEVELS

    return [lv for lv in LEVELS if lv == "DRAM"
            or any(d.roof.find_memory(lv) is not None for d in devices)]


def _ratio(values: list[float | None], order: tuple[int, int, bool] = (0, 1, False)) -> str:
    """values[num] / values[den] ('0.92', or '84%' when `order` asks for a percentage):
    how much of the reference a node reaches, the acceptance number; '-' where either has
    none."""
    num, den, percent = order
    a, b = values[num], values[den]
    if not a or not b:
        return "-"
    return f"{a / b:.0%}" if percent else f"{a / b:.3g}"


def ratio_order(devices) -> tuple[int, int, bool]:
    """Which device divides which in the ratio column: a measured roof over a nominal one
    as a percentage, seed 004's record-table column 实测 ÷ 标称 (measured / nominal, 84 %),
    whichever order they were named in (review 18a L6); else first / second."""
    kinds = [d.roof.kind for d in devices]
    if sorted(kinds) == ["measured", "nominal"]:
        return kinds.index("measured"), kinds.index("nominal"), True
    return 0, 1, False


def compare_rows(devices, ratio: bool = False) -> list[list[str]]:
    """One row per fact, memory level and compute ceiling; with `ratio` (two devices) a
    last column of measured / nominal (or first / second, see ratio_order) for each row
    of figures."""
    from ..units import PRECISIONS, UNITS

    pick = ratio_order(devices) if ratio else (0, 1, False)

    found = {(c.precision, c.unit) for d in devices for c in d.roof.compute}
    order = sorted(found, key=lambda pu: (PRECISIONS.index(pu[0]) if pu[0] in PRECISIONS
                                          else 99, UNITS.index(pu[1]) if pu[1] in UNITS else 9))
    labels = [f"{p} {u}" for p, u in order]
    memory = [d.memory_bytes for d in devices]   # a FileRoof's: its host's RAM
    # a catalog CPU's memory is the most its sockets take (6 TB), no size to reach
    cpu = any(getattr(d, "kind", None) == "cpu" for d in devices)
    rows = [["kind"] + [f"{d.roof.kind} roof" if isinstance(d, FileRoof) else d.kind
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
             ["interconnect"] + [_fact(d, lambda d: f"{d.interconnect}, "
                                       f"{si(d.interconnect_bytes_per_s, 'B/s')}")
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


def register(app) -> None:
    """Add `rooflab specs list|show|compare`."""
    from .common import console, emit_json

    specs = typer.Typer(help=HELP, no_args_is_help=True)

    @specs.command("list")
    def list_cmd(
        kind: str = typer.Option(None, "--kind", help="gpu, cpu or accelerator"),
        json_out: bool = typer.Option(False, "--json", help="print devices with their roofs"),
    ) -> None:
        """Every catalog device: top dense peak, DRAM bandwidth, ridge, memory, TDP.

        Example: rooflab specs list --kind gpu
        """
        from ..errors import InputError
        from ..hardware.catalog import KINDS, all_devices
        from ..model.schema import SCHEMA_VERSION

        if kind is not None and kind.lower() not in KINDS:
            raise InputError(f"--kind must be one of {', '.join(KINDS)}; got '{kind}'")
        devices = sorted((d for d in all_devices() if kind is None or d.kind == kind.lower()),
                         key=lambda d: KINDS.index(d.kind))
        if json_out:
            emit_json({"schema_version": SCHEMA_VERSION,
                       "devices": [_device_json(d) for d in devices]})
            return
        out = console()
        for table in list_tables(devices, out.width):
            out.print(table)

    @specs.command("show")
    def show_cmd(
        name: str = typer.Argument(..., help="device name, e.g. h200, 'RTX 4090', epyc-9654, "
                                                     "or a profile .json (its judging roof)"),
        json_out: bool = typer.Option(False, "--json", help="print the device and its roof"),
        threads: int = typer.Option(None, "--threads", "-t", min=1,
                                    help="a profile from `probe --threads 1,2,all`: its roof "
                                    "at this thread count"),
        sweep: bool = typer.Option(False, "--sweep", help="a probed profile: its bandwidth "
                                   "vs working-set sweep as a table (-o: a chart)"),
        output: str = typer.Option(None, "--output", "-o", help="with --sweep: write the "
                                   "chart (.png or .svg)"),
    ) -> None:
        """All ceilings of one device with ridge points per precision, and their sources.

        Example: rooflab specs show h200 --json;
        rooflab specs show me.json --threads 1   (the one-thread roof of a scaling probe);
        rooflab specs show me.json --sweep -o ws.png
        """
        from ..errors import InputError
        from ..hardware.catalog import device_to_dict
        from ..model.schema import SCHEMA_VERSION, roof_to_dict

        if output is not None and not sweep:
            raise InputError(f"-o writes the working-set chart of --sweep; add --sweep "
                             f"(`rooflab specs show {name} --sweep -o {output}`)")
        if sweep:
            _show_sweep(name, threads, output, json_out)
            return
        d = _entry(name) if threads is None else _threads_entry(name, threads)
        if json_out:
            head = ({"file": d.path} if isinstance(d, FileRoof) else
                    {"device": device_to_dict(d)})
            emit_json({"schema_version": SCHEMA_VERSION, **head,
                       "roof": roof_to_dict(d.roof)})
            return
        out = console()
        for table in _show_tables(d):
            out.print(table)

    @specs.command("compare")
    def compare_cmd(
        names: list[str] = typer.Argument(..., help="device names (or profile .json files: "
                                                          "their judging roofs) side by side"),
        json_out: bool = typer.Option(False, "--json", help="print devices with their roofs"),
    ) -> None:
        """Devices side by side, each compute peak with its DRAM ridge point.

        Example: rooflab specs compare t4 l4 a10g   (or t4,l4,a10g, as llm --compare takes);
        rooflab specs compare t4 me.json   (a probed profile beside its datasheet)
        """
        from ..errors import InputError
        from ..model.schema import SCHEMA_VERSION

        # `llm --compare` and `choose --among` take comma lists; accept the same here.
        names = [part.strip() for n in names for part in n.split(",") if part.strip()]
        if not names:
            raise InputError("specs compare takes device names, e.g. `rooflab specs compare "
                             "h100 h200` (or h100,h200)")
        devices = [_entry(n) for n in names]
        if json_out:
            emit_json({"schema_version": SCHEMA_VERSION,
                       "devices": [_device_json(d) for d in devices]})
            return
        has_file = any(isinstance(d, FileRoof) for d in devices)
        files = "; a file: its judging roof" if has_file else ""
        # a profile beside a reference (another node's profile, its datasheet): the ratio
        # column is the node-acceptance table HPC sites build by hand (review 14d L6)
        ratio = has_file and len(devices) == 2
        num, den, percent = ratio_order(devices) if ratio else (0, 1, False)
        what = " (measured / nominal)" if percent else ""
        key = f"; ratio = {devices[num].name} / {devices[den].name}{what}" if ratio else ""
        console().print(_table(f"nominal, dense{files}; ridge in FLOP/byte against DRAM{key}",
                               [""] + [d.name for d in devices]
                               + ([("measured / nominal" if percent else "ratio")] if ratio
                                  else []),
                               compare_rows(devices, ratio)))

    specs.command("import")(import_cmd)
    app.add_typer(specs, name="specs")


# a typed peak: a rate and, after '@', the unit that reaches it (import_roofs.typed_ceiling)
PEAK = "RATE[@UNIT]"


def import_cmd(
    files: list[str] = typer.Argument(None, help="likwid-bench outputs, each FILE@LEVEL "
                                      "(L1, L2, L3, DRAM: where its working set sits; a "
                                      "peakflops run needs none), or ERT roofline.json"),
    name: str = typer.Option(None, "--name", help="the roof's name (default: 'imported "
                             "roof', or the ERT host)"),
    l1: str = typer.Option(None, "--l1", help="L1 bandwidth, e.g. 1.7TB/s"),
    l2: str = typer.Option(None, "--l2", help="L2 bandwidth"),
    l3: str = typer.Option(None, "--l3", help="L3 bandwidth"),
    dram: str = typer.Option(None, "--dram", help="DRAM bandwidth, e.g. 83GB/s"),
    fp64: list[str] = typer.Option(None, "--fp64", metavar=PEAK, help="fp64 peak, e.g. "
                                   "355GFLOP/s"),
    fp32: list[str] = typer.Option(None, "--fp32", metavar=PEAK, help="fp32 peak, e.g. "
                                   "710GFLOP/s"),
    tf32: list[str] = typer.Option(None, "--tf32", metavar=PEAK, help="tf32 peak (unit "
                                   "tensor unless @vector)"),
    fp16: list[str] = typer.Option(None, "--fp16", metavar=PEAK, help="fp16 peak, e.g. "
                                   "280TFLOP/s@tensor (a GPU's Tensor Cores); without '@' "
                                   "vector (SIMD, CUDA cores), as for every precision but "
                                   "tf32 and fp8; give a precision twice for both units"),
    bf16: list[str] = typer.Option(None, "--bf16", metavar=PEAK, help="bf16 peak, e.g. "
                                   "65TFLOP/s@tensor"),
    fp8: list[str] = typer.Option(None, "--fp8", metavar=PEAK, help="fp8 peak (unit tensor "
                                  "unless @vector)"),
    int8: list[str] = typer.Option(None, "--int8", metavar=PEAK, help="int8 peak, e.g. "
                                   "130TOP/s@tensor"),
    measured: bool = typer.Option(False, "--measured", help="the numbers typed in were "
                                  "measured (default: nominal, datasheet figures)"),
    from_device: str = typer.Option(None, "--from", help="a catalog device (e.g. T4): write "
                                    "a profile with its datasheet as the nominal roof and "
                                    "the numbers given as the measured roof (implies "
                                    "--measured), as `rooflab probe` writes one"),
    llc: str = typer.Option(None, "--llc", help="the last-level cache of the machine "
                            "likwid-bench ran on, e.g. 32MiB (default: this machine's "
                            "caches), to check each run's working set against its level"),
    output: str = typer.Option(None, "--output", "-o", help="write the roof JSON here "
                               "(default: print it)"),
) -> None:
    """A roof JSON for --on from likwid-bench outputs, ERT's roofline.json and/or numbers;
    with --from a catalog device, a profile: its datasheet nominal, the numbers measured.

    Examples:

      rooflab specs import --dram 83GB/s --fp64 355GFLOP/s -o roof.json

      rooflab specs import triad.txt@DRAM peakflops.txt -o roof.json

      rooflab specs import --from T4 --dram 270GB/s --fp16 50TFLOP/s@tensor
    """
    from ..hardware.import_roofs import assemble_roof
    from ..model.schema import SCHEMA_VERSION, roof_to_dict
    from .common import console, emit_json

    if output is not None:
        from ..files import check_writable
        from .common import refuse_input_as_output

        refuse_input_as_output(output, [f.rpartition("@")[0] or f for f in files or ()])
        check_writable(output)
    caches = _run_caches(llc)
    ceilings, names = [], []
    for spec in files or ():
        got, host = _imported(spec, caches)
        ceilings += got
        names += [host] if host else []
    peaks = {"--fp64": fp64, "--fp32": fp32, "--tf32": tf32, "--fp16": fp16, "--bf16": bf16,
             "--fp8": fp8, "--int8": int8}
    typed = [(flag, text) for flag, text in (("--l1", l1), ("--l2", l2), ("--l3", l3),
                                             ("--dram", dram)) if text is not None]
    typed += [(flag, text) for flag, texts in peaks.items() for text in texts or ()]
    nominal = _from_roof(from_device) if from_device is not None else None
    if nominal is not None and not typed and not files:
        from ..errors import InputError

        raise InputError(f"--from {from_device} takes the measured numbers to set beside "
                         f"its datasheet, e.g. --from {from_device} --dram 270GB/s --fp16 "
                         f"50TFLOP/s@tensor")
    ceilings += [(f"{flag} {text}", _typed(flag, text, measured, nominal))
                 for flag, text in typed]
    if not ceilings:
        from ..errors import InputError

        raise InputError("nothing to import: give likwid-bench outputs (triad.txt@DRAM), "
                         "ERT's roofline.json, or numbers (--dram 83GB/s --fp64 355GFLOP/s)")
    default = f"{nominal.name} measured" if nominal else "imported roof"
    roof = assemble_roof(name or (names[0] if names else default), ceilings)
    doc = ({"schema_version": SCHEMA_VERSION, **roof_to_dict(roof)} if nominal is None
           else _two_roof_doc(nominal, roof))
    if output is None:
        emit_json(doc)
        return
    from ..files import write_json
    from ..units import fmt_rate, si

    write_json(output, doc)
    parts = [f"{c.label} {fmt_rate(c.value, c.precision)}" for c in roof.compute]
    parts += [f"{c.level} {si(c.value, 'B/s')}" for c in roof.memory]
    beside = f", beside the {nominal.name} datasheet (nominal)" if nominal else ""
    console().print(f"wrote {output}: {roof.name} ({roof.kind}): {', '.join(parts)}{beside}; "
                    f"use it as --on {output}")


def _typed(flag: str, text: str, measured: bool, nominal: Roof | None):
    """A typed ceiling; beside a datasheet (--from) fitted to it (fit_to_datasheet)."""
    from ..hardware.import_roofs import fit_to_datasheet, typed_ceiling

    c = typed_ceiling(flag, text, measured or nominal is not None)
    return c if nominal is None else fit_to_datasheet(flag, text, c, nominal)


def _from_roof(name: str) -> Roof:
    """--from's nominal roof: a catalog device's datasheet. A file is refused: its judging
    roof is measured, and a datasheet is what the measured numbers are set beside."""
    from ..errors import InputError

    d = _entry(name)
    if isinstance(d, FileRoof):
        raise InputError(f"--from takes a catalog device (its datasheet is the nominal roof), "
                         f"not a file: '{name}'; e.g. --from T4 (`rooflab specs list`)")
    return d.roof


def _two_roof_doc(nominal: Roof, measured: Roof) -> dict:
    """The profile `probe` writes, from a datasheet roof and typed-in measured numbers:
    seed 004's record table and the ridge-band warning need both roofs in one file. The
    measured roof keeps the datasheet's launch overhead, marked as copied (COPIED_OVERHEAD:
    typed bandwidth and peaks do not measure it; review 19a N9), so the record table does
    not read it as measured."""
    from dataclasses import replace

    from ..hardware.import_roofs import COPIED_OVERHEAD
    from ..hardware.profile import MachineProfile, profile_to_dict

    if measured.overhead_s is None and nominal.overhead_s is not None:
        measured = replace(measured, overhead_s=nominal.overhead_s,
                           overhead_source=COPIED_OVERHEAD)
    return profile_to_dict(MachineProfile(host={"name": measured.name}, nominal=nominal,
                                          measured=measured,
                                          extras={"imported": "rooflab specs import --from"}))


def _run_caches(llc: str | None):
    """The cache sizes likwid-bench runs are checked against: --llc's (the run's machine),
    else this machine's (sysfs), said as such; None where neither is known."""
    from ..hardware.import_roofs import CacheSizes

    if llc is not None:
        from ..units import parse_size

        return CacheSizes(llc=parse_size(llc, "--llc"), source=f"--llc {llc}")
    from ..hardware.host import detect_caches

    c = detect_caches()
    last = c.l3 * max(1, c.l3_instances) if c.l3 else c.l2
    if not (c.l1d or c.l2 or last):
        return None
    return CacheSizes(l1=c.l1d, l2=c.l2, llc=last,
                      source="this machine's caches (if likwid-bench ran on another, give "
                             "its last-level cache: --llc 32MiB)")


def _imported(spec: str, caches=None):
    """((origin, ceiling), ...) and a host name from one import argument: ERT's
    roofline.json (its measured ceilings), or a likwid-bench output FILE[@LEVEL], each
    bandwidth's working set checked against `caches` (a warning where it misses)."""
    from pathlib import Path

    from ..errors import InputError, ParseError
    from ..files import read_text
    from ..hardware.import_roofs import (
        bench_ceilings,
        ert_roofs,
        is_ert,
        is_likwid_bench,
        parse_likwid_bench,
    )
    from ..model.schema import level_name
    from ..units import LEVELS

    path, at, level = spec.rpartition("@") if "@" in spec else (spec, "", "")
    if at and not Path(path).is_file() and Path(spec).is_file():
        path, level = spec, ""   # a file whose name has an '@'
    if not Path(path).is_file():
        raise ParseError("file not found", path=path)
    if level and level_name(level) not in LEVELS:
        raise InputError(f"{spec}: '@{level}' is none of {', '.join(LEVELS)} (the level "
                         f"the run's working set sits in)")
    if path.lower().endswith(".json"):
        from ..files import load_json

        data = load_json(path)
        if not is_ert(data):
            raise ParseError("not ERT's roofline.json (no 'empirical' with 'gbytes'/"
                             "'gflops'); a rooflab roof or profile needs no import: pass "
                             "it to --on", path=path)
        if level:
            raise InputError(f"{spec}: ERT's roofline.json names its levels; drop '@{level}'")
        roof = ert_roofs(data, path)[0]
        return ([(path, c) for c in (*roof.compute, *roof.memory)],
                roof.name.removesuffix(" ERT"))
    text = read_text(Path(path))
    if not is_likwid_bench(text):
        raise ParseError("not likwid-bench output (no 'Test:' and 'MByte/s:' lines) nor "
                         "ERT's roofline.json; save it with `likwid-bench -t triad -w "
                         "S0:1GB > triad.txt`", path=path)
    runs = parse_likwid_bench(text, path)
    got = bench_ceilings(runs, level_name(level) if level else None, path, caches)
    from .common import warn

    for c in got:
        for w in c.warnings:
            warn(w)
    return [(spec, c) for c in got], None
