"""rooflab specs — list, show and compare the nominal (datasheet) hardware catalog."""

from __future__ import annotations

import typer

# the tables and `specs import`, each in its own module; the commands below use these.
from .specs_import import import_cmd
from .specs_tables import (
    FileRoof,
    _device_json,
    _show_tables,
    _table,
    compare_ratios,
    compare_rows,
    core_count_note,
    kind_mismatch_note,
    list_tables,
    ratio_order,
)

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


def _entry(name: str):
    """A catalog device, or a FileRoof for a name that looks like a file."""
    from ..hardware.catalog import lookup
    from ..hardware.resolve import load_roofs, looks_like_file, split_threads

    if not looks_like_file(name) and split_threads(name) is None:
        from ..model.dies import die_query_words
        from .common import warn

        dev = lookup(name)
        said = die_query_words(name, dev.name, dev.software_devices)
        if said:
            warn(said)
        return dev
    if name.lower().endswith(".ncu-rep"):   # its recorded peaks, as --on reads them
        from .inputs import resolve_on

        return FileRoof(name, resolve_on(name)[0], None, None)
    roofs = load_roofs(name)
    if not roofs:
        from ..errors import InputError

        raise InputError(f"'{name}' holds no roof; give a catalog name (`rooflab specs "
                         f"list`) or a profile from `rooflab probe`")
    host = _host(name)
    got = host.get("memory_bytes")
    at = split_threads(name)    # me.json@1t: the roof at 1 thread
    cores = at[1] if at else host.get("threads_used") or host.get("cores")
    return FileRoof(name, roofs[0],
                    float(got) if isinstance(got, (int, float)) and got > 0 else None,
                    cores if isinstance(cores, int) and cores > 0 else None,
                    _device_kind(host))


def _device_kind(host: dict) -> str | None:
    """What a profile's probe ran on: "gpu" for `probe --device cuda` (backend cuda or
    rocm), "cpu" for the CPU probe (host kind cpu) and the GPU probe's CPU dry run; None
    for a file that does not say (an imported roof)."""
    if host.get("backend") in ("cuda", "rocm"):
        return "gpu"
    return "cpu" if host.get("kind") == "cpu" or host.get("backend") == "cpu" else None


def _host(name: str) -> dict:
    """A probed profile's host block (its RAM, its cores), else {}."""
    from ..files import load_json
    from ..hardware.resolve import split_threads
    from ..model.document_parts import profile_part

    path = split_threads(name)[0] if split_threads(name) else name
    if not path.lower().endswith(".json"):
        return {}
    host = (profile_part(load_json(path)) or {}).get("host")
    return host if isinstance(host, dict) else {}


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
        from .common import wrote

        wrote(output)   # stderr, as every verb (s22 r3 F7)


def _list_cmd(
    kind: str = typer.Option(None, "--kind", help="gpu, cpu or accelerator"),
    json_out: bool = typer.Option(False, "--json", help="print devices with their roofs"),
) -> None:
    """Every catalog device: top dense peak, DRAM bandwidth, ridge, memory, TDP.

    Example: rooflab specs list --kind gpu
    """
    from ..errors import InputError
    from ..hardware.catalog import all_devices
    from ..hardware.catalog_fields import KINDS
    from ..model.schema import SCHEMA_VERSION
    from .common import console, emit_json

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


def _show_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="device name, e.g. h200, 'RTX 4090', epyc-9654, "
                                      "a profile .json (its judging roof) or an .ncu-rep "
                                      "(the peaks ncu recorded, as --on reads them)"),
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
    from ..model.roof_schema import roof_to_dict
    from ..model.schema import SCHEMA_VERSION
    from .common import console, emit_json

    if output is not None and not sweep:
        raise InputError(f"-o writes the working-set chart of --sweep; add --sweep "
                         f"(`rooflab specs show {name} --sweep -o {output}`)")
    if sweep:
        _show_sweep(name, threads, output, json_out)
        return
    d = _entry(name) if threads is None else _threads_entry(name, threads)
    _say_names(name)
    if json_out:
        head = ({"file": d.path} if isinstance(d, FileRoof) else
                {"device": device_to_dict(d)})
        emit_json({"schema_version": SCHEMA_VERSION, **head,
                   "roof": roof_to_dict(d.roof)})
        return
    out = console()
    for table in _show_tables(d):
        out.print(table)


def _say_names(names) -> None:
    """A family name that fits several entries (M3 Max: two GPU bins) is said on stderr
    once the names resolved, before the tables (as --on says it: options.say_name_note_now;
    after a long table it went unread, review s34 C); stdout, --json's included, as it was."""
    from .options import say_name_notes

    say_name_notes(names)


def _compare_cmd(
    ctx: typer.Context,
    names: list[str] = typer.Argument(..., help="device names (or profile .json or "
                                             ".ncu-rep files: their judging roofs) side by "
                                             "side"),
    json_out: bool = typer.Option(False, "--json", help="print devices with their roofs"),
) -> None:
    """Devices side by side, each compute peak with its DRAM ridge point.

    Example: rooflab specs compare t4 l4 a10g   (or t4,l4,a10g, as llm --compare takes);
    rooflab specs compare t4 me.json   (a probed profile beside its datasheet)
    """
    from ..errors import InputError
    from ..model.schema import SCHEMA_VERSION
    from .common import console, emit_json

    # `llm --compare` and `choose --among` take comma lists; accept the same here.
    names = [part.strip() for n in names for part in n.split(",") if part.strip()]
    if not names:
        raise InputError("specs compare takes device names, e.g. `rooflab specs compare "
                         "h100 h200` (or h100,h200)")
    devices = [_entry(n) for n in names]
    _say_names(names)
    has_file = any(isinstance(d, FileRoof) for d in devices)
    cores_note = core_count_note(devices) or kind_mismatch_note(devices)
    if json_out:
        ratios = ({"ratios": compare_ratios(devices)} if has_file and len(devices) == 2
                  else {})
        notes = {"notes": [cores_note]} if cores_note else {}
        emit_json({"schema_version": SCHEMA_VERSION,
                   "devices": [_device_json(d) for d in devices], **ratios, **notes})
        return
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
    if cores_note:
        console().print(f"note: {cores_note}")


def register(app) -> None:
    """Add `rooflab specs list|show|compare|import`."""
    specs = typer.Typer(help=HELP, no_args_is_help=True)
    specs.command("list")(_list_cmd)
    specs.command("show")(_show_cmd)
    specs.command("compare")(_compare_cmd)
    specs.command("import")(import_cmd)
    app.add_typer(specs, name="specs")
