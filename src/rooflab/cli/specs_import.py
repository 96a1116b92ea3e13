"""rooflab specs import: a roof JSON for --on from likwid-bench outputs, ERT's
roofline.json, Intel Advisor's roofs report and/or typed numbers; with --from a catalog
device, a two-roof profile (its datasheet nominal, the numbers measured). The parsing is
hardware/import_roofs.py's (Advisor's: hardware/advisor_roofs.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from ..model.ceiling import Roof

# a typed peak: a rate and, after '@', the unit that reaches it (import_roofs.typed_ceiling)
PEAK = "RATE[@UNIT]"


def import_cmd(
    files: list[str] = typer.Argument(None, help="likwid-bench outputs, each FILE@LEVEL "
                                      "(L1, L2, L3, DRAM: where its working set sits; a "
                                      "peakflops run needs none), ERT roofline.json, or "
                                      "Intel Advisor's roofs report (advisor --report=roofs "
                                      "[--format=csv]; FILE@1t: its single-threaded roofs)"),
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
    fp4: list[str] = typer.Option(None, "--fp4", metavar=PEAK, help="fp4 peak, e.g. "
                                  "9PFLOP/s (unit tensor unless @vector)"),
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
    # The roof is JSON already: --json prints it (with -o too, as every verb's --json does,
    # the 'wrote' line then on stderr). A wrapper that appends --json to every command got
    # "No such option" here alone (review r1 F12).
    json_out: bool = typer.Option(False, "--json", help="print the roof JSON (also with -o)"),
) -> None:
    """A roof JSON for --on from likwid-bench outputs, ERT's roofline.json, Intel Advisor's
    roofs report and/or numbers; with --from a catalog device, a profile: its datasheet
    nominal, the numbers measured.

    Examples:

      rooflab specs import --dram 83GB/s --fp64 355GFLOP/s -o roof.json

      rooflab specs import triad.txt@DRAM peakflops.txt -o roof.json

      rooflab specs import advisor-roofs.csv -o roof.json

      rooflab specs import --from T4 --dram 270GB/s --fp16 50TFLOP/s@tensor
    """
    from ..hardware.import_roofs import assemble_roof
    from ..model.roof_schema import roof_to_dict
    from ..model.schema import SCHEMA_VERSION
    from .common import emit_json, say_line

    if output is not None:
        from .common import check_output

        # .json only, as probe's profile: a roof written to roof.png or to no suffix (s38
        # G) was JSON that no chart viewer opens and no verb's reader expects
        check_output(output, (".json",),
                     inputs=[f.rpartition("@")[0] or f for f in files or ()])
    caches = _run_caches(llc)
    ceilings, names, notes = [], [], []
    for spec in files or ():
        got, host, said = _imported(spec, caches)
        ceilings += got
        names += [host] if host else []
        notes += said
    peaks = {"--fp64": fp64, "--fp32": fp32, "--tf32": tf32, "--fp16": fp16, "--bf16": bf16,
             "--fp8": fp8, "--fp4": fp4, "--int8": int8}
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
    if notes:   # what a tool's file held that has no ceiling here (Advisor's Add peaks)
        from dataclasses import replace

        roof = replace(roof, notes=(*roof.notes, *notes))
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
    from ..model.dies import kind_words

    wrote = (f"wrote {output}: {roof.name} ({kind_words(roof)}): {', '.join(parts)}{beside}; "
             f"use it as --on {output}")
    wrote += "".join(f"\nnote: {n}" for n in notes)
    if json_out:
        emit_json(doc)
        say_line(wrote)
    else:   # stderr, as every verb (s22 r3 F7); a name '[/]x' is text, not markup (r1 F5)
        import sys

        from ..report.term_text import visible

        print(visible(wrote), file=sys.stderr)


def _typed(flag: str, text: str, measured: bool, nominal: Roof | None):
    """A typed ceiling; beside a datasheet (--from) fitted to it (fit_to_datasheet)."""
    from ..hardware.import_roofs import fit_to_datasheet, typed_ceiling

    c = typed_ceiling(flag, text, measured or nominal is not None)
    return c if nominal is None else fit_to_datasheet(flag, text, c, nominal)


def _from_roof(name: str) -> Roof:
    """--from's nominal roof: a catalog device's datasheet. A file is refused: its judging
    roof is measured, and a datasheet is what the measured numbers are set beside."""
    from ..errors import InputError
    from .specs import FileRoof, _entry

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
    doc = profile_to_dict(MachineProfile(host={"name": measured.name}, nominal=nominal,
                                         measured=measured,
                                         extras={"imported": "rooflab specs import --from"}))
    # no `created`: nothing was measured here (typed numbers, a datasheet), and the time
    # of writing made the same command give other bytes on every run, a roof file
    # regenerated in CI diffing each time (review s19 r2 F10); a profile without it reads
    # as before (profile_from_dict: '')
    doc.pop("created", None)
    return doc


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
    """((origin, ceiling), ...), a host name and notes from one import argument: ERT's
    roofline.json (its measured ceilings), Intel Advisor's roofs report FILE[@1t] (CSV or
    text: hardware/advisor_roofs.py), or a likwid-bench output FILE[@LEVEL], each
    bandwidth's working set checked against `caches` (a warning where it misses)."""
    from pathlib import Path

    from ..errors import InputError, ParseError
    from ..files import read_text
    from ..hardware.advisor_roofs import is_advisor_roofs
    from ..hardware.ert_roofs import ert_roofs, is_ert
    from ..hardware.import_roofs import bench_ceilings, is_likwid_bench, parse_likwid_bench
    from ..model.schema import level_name
    from ..units import LEVELS

    path, at, level = spec.rpartition("@") if "@" in spec else (spec, "", "")
    if at and not Path(path).is_file() and Path(spec).is_file():
        path, level = spec, ""   # a file whose name has an '@'
    if Path(path).is_dir():   # as every other reader says (review r1 F3)
        raise ParseError("is a directory; give the likwid-bench output or ERT's "
                         "roofline.json file", path=path)
    if not Path(path).is_file():
        raise ParseError("file not found", path=path)
    text = None if path.lower().endswith(".json") else read_text(Path(path))
    if text is not None and is_advisor_roofs(text):
        return _advisor(spec, path, level, text)
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
                roof.name.removesuffix(" ERT"), [])
    if not is_likwid_bench(text):
        from ..hardware.roof_file_hints import tool_output_hint

        # another tool's roof (rocprof-compute's roofline.csv, STREAM, Advisor, ERT's sum,
        # nvbandwidth): the command for that tool, not likwid-bench's (review s20 r6 F6)
        instead = tool_output_hint(path, importing=True)
        raise ParseError(f"not likwid-bench output nor ERT's roofline.json: {instead}"
                         if instead else
                         "not likwid-bench output (no 'Test:' and 'MByte/s:' lines) nor "
                         "ERT's roofline.json; save it with `likwid-bench -t triad -w "
                         "S0:1GB > triad.txt`, or type the numbers (--dram 83GB/s --fp64 "
                         "355GFLOP/s)", path=path)
    runs = parse_likwid_bench(text, path)
    got = bench_ceilings(runs, level_name(level) if level else None, path, caches)
    from .common import warn

    for c in got:
        for w in c.warnings:
            warn(w)
    return [(spec, c) for c in got], None, []


def _advisor(spec: str, path: str, at: str, text: str):
    """Intel Advisor's roofs report read as _imported gives a file: every roof it holds
    that rooflab has a ceiling for, all-thread or ('@1t') single-threaded, and notes on
    the rest (review s26 r2 F5: it was recognised, refused, and a command to retype it
    given that dropped the scalar, add, one-thread and int64 roofs)."""
    from ..hardware.advisor_roofs import advisor_ceilings, advisor_host, check_at

    one = check_at(spec, at)
    ceilings, notes = advisor_ceilings(text, path, one)
    return [(spec, c) for c in ceilings], advisor_host(path, one), notes
