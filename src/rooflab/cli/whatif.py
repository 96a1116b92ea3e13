"""rooflab whatif — move kernels under one change and predict where they land."""

from __future__ import annotations

import math

import typer

from ..errors import InputError
from ..ingest.kernelfile_rows import precision_assumed_note
from ..units import fmt_times
from .options import Files, On

# The table and the llm lines live by what they do.
from .whatif_llm import _llm_doc, _llm_extras, _llm_lines
from .whatif_table import _table

HELP = """What if the precision, the weights' format or sparsity, the fusion, the batch, the
bytes a kernel moves or the hardware changed? Each change builds new kernels under a stated
assumption and predicts their time on the roof, keeping each kernel's current efficiency (the
fraction of its roof it reaches).
-o chart.png draws the moved points with arrows from where they were.

  rooflab whatif kernels.json --on t4 --precision fp16
  rooflab whatif decode.json --on t4 --quantize int4 -o moved.png
  rooflab whatif decode.json --on a100 --sparsity 2:4
  rooflab whatif kernels.json --on h100 --fuse add,relu,mul
  rooflab whatif decode.json --on h100 --batch 32
  rooflab whatif kernels.json --on a100 --bytes-scale 0.25 --only conv2d
  rooflab whatif kernels.json --on a100 --hardware h200

Give one change at a time; --only NAME,NAME limits it to some kernels (not --fuse/--hardware);
repeat --only for a name with a comma in it (torch's 'aten::mv [1024x4096, 4096]').
--bytes-scale 0.25: a quarter of the bytes at every memory level (AI x 4), FLOP unchanged.
"""


def _check_bytes_scale(factor: float, kernels) -> None:
    """--bytes-scale must keep every changed kernel's bytes inside the range a Kernel takes
    (model/kernel.COUNT_RANGE) and its time, which grows at most as its bytes do, under
    MAX_SECONDS: 1e300 was blamed on the file ("kernel 'x': bytes[DRAM] must be >= 0 and
    finite; got inf": review r3 F11), so the flag and the factors allowed are named."""
    from ..model.kernel import COUNT_RANGE, MAX_SECONDS

    if not 0 < factor < math.inf:
        return   # scale_bytes says it, with what the factor means
    lo_count, hi_count = COUNT_RANGE
    counts = [b for k in kernels for b in k.bytes.values() if b > 0]
    times = [k.seconds for k in kernels if k.seconds]
    limits = ([hi_count / max(counts)] if counts else []) + (
        [MAX_SECONDS / max(times)] if times else [])
    hi = min(limits, default=math.inf)
    lo = lo_count / min(counts) if counts else 0.0
    if not lo <= factor <= hi:
        raise InputError(f"--bytes-scale {factor:g}: the kernels' bytes x {factor:g} leave "
                         f"the range rooflab takes ({lo_count:g} to {hi_count:g} bytes, "
                         f"times up to {MAX_SECONDS:g} s); give a factor from {lo:.3g} to "
                         f"{hi:.3g} (0.25 = a quarter of the bytes, AI x 4)")


def _names(values, kernels=()) -> list[str] | None:
    """Kernel names from --only (repeatable) or --fuse: each value split on commas, except
    that commas inside a kernel's own name stay (torch names such as 'aten::mv [1024x4096,
    4096]'): at each piece the longest run of pieces that joins into a name of `kernels` is
    taken whole, so `--only "aten::mv [1024x4096, 4096],relu"` names two kernels."""
    values = [values] if isinstance(values, str) else list(values or ())
    if not values:   # not given (typer gives an empty list for a repeatable option)
        return None
    have = {k.name for k in kernels}
    names: list[str] = []
    for text in values:
        names += _split_names(text, have)
    if not names:
        raise InputError("expected comma-separated kernel names, e.g. add,relu,mul (give "
                         "--only again for a name with a comma in it)")
    return names


def _split_names(text: str, have: set[str]) -> list[str]:
    """One option value's names: whole when it is a kernel's name, else split on commas
    with the pieces of a comma-holding name joined again (_names)."""
    if text.strip() in have:
        return [text.strip()]
    pieces, out, i = text.split(","), [], 0
    while i < len(pieces):
        j = next((j for j in range(len(pieces), i + 1, -1)
                  if ",".join(pieces[i:j]).strip() in have), i + 1)
        name = ",".join(pieces[i:j]).strip()
        if name:
            out.append(name)
        i = j
    return out


def run_whatif(roof, kernels, *, precision=None, quantize=None, fuse=None, batch=None,
               hardware=None, only=None, sparsity=None, bytes_scale=None, group=None,
               on_roofs=None, roofs_from="the --on profile", ranks=None, files=()):
    """Dispatch to the one model/whatif function the options name. on_roofs: every roof of
    the machine the kernels are judged on (--on's, else the profile the input carries: a
    profile holds measured, then nominal), for --hardware's like-for-like basis;
    roofs_from: where they came from, as the assumption line names it; ranks: a train
    file's setup (whatif_train.train_file_ranks), its rows re-ringed per device, and
    under --zero/--tp the device's own rank (from the train file among `files`)."""
    from ..model import whatif as w
    from ..model.whatif_batch import change_batch
    from ..model.whatif_precision import change_precision
    from ..model.whatif_weights import quantize_weights, sparsify

    given = [x for x in (precision, quantize, fuse, batch, hardware, sparsity, bytes_scale)
             if x is not None]
    if len(given) != 1:
        raise InputError("give exactly one change: --precision, --quantize, --sparsity, "
                         "--fuse, --batch, --bytes-scale or --hardware")
    if group is not None and quantize is None:
        raise InputError("--group goes with --quantize int4/int8 (weights per scale)")
    _check_roof_known(roof, kernels, precision=precision, hardware=hardware)
    if only and (fuse is not None or hardware is not None):
        # ignored, it read as one kernel moved under a total of all of them (review r8 F3)
        what = "--fuse (it names its kernels itself)" if fuse is not None else (
            "--hardware (every kernel moves to the other device)")
        raise InputError(f"--only does not apply to {what}; drop --only, or give the "
                         f"kernels alone in a file of their own")
    if precision is not None:
        # the gain is capped at the nominal peaks' ratio where the profile has them (review
        # r4 F4: a probe's fp32/fp64 ratio of 13x or 0.86x is noise, not the machine)
        nominal = next((r for r in on_roofs or () if r.kind == "nominal"), None)
        return change_precision(roof, kernels, precision, names=_names(only, kernels),
                                nominal=nominal)
    if quantize is not None:
        return quantize_weights(roof, kernels, quantize, names=_names(only, kernels), group=group)
    if sparsity is not None:
        if sparsity.replace(" ", "") != "2:4":
            raise InputError(f"--sparsity takes 2:4 (the structured sparsity tensor cores "
                             f"run); got '{sparsity}'")
        from ..hardware.catalog import match_device_name

        # 2:4 halves the math only where the device has a sparse rate (review s28 R4 F6)
        dev = match_device_name(roof.name)
        return sparsify(roof, kernels, names=_names(only, kernels),
                        sparse=None if dev is None else set(dev.sparse))
    if fuse is not None:
        return w.fuse(roof, kernels, _names(fuse, kernels))
    if batch is not None:
        from .whatif_checks import check_batch

        check_batch(batch, kernels)
        return change_batch(roof, kernels, batch, names=_names(only, kernels))
    if bytes_scale is not None:
        names = _names(only, kernels)
        _check_bytes_scale(bytes_scale, [k for k in kernels if names is None or k.name in names])
        return w.scale_bytes(roof, kernels, bytes_scale, names=names)
    from dataclasses import replace

    from ..model.efficiency_basis import efficiency_basis

    targets, said = _targets(hardware, kernels, on_roofs or (roof,))
    if not targets:
        raise InputError(f"--hardware '{hardware}' holds no roof; give a catalog name "
                         f"(`rooflab specs list`) or a profile from `rooflab probe`")
    from .whatif_train import hardware_change, one_device_rows

    # a train --dp step's communication runs on the other device's own link (s30), and
    # not at all where its ring there is one device, as --on of it has none (s35 A)
    kernels, alone = one_device_rows(kernels, hardware, ranks)
    targets, change, own = hardware_change(kernels, targets, hardware, ranks, files)
    basis, target, line = efficiency_basis(on_roofs or (roof,), targets, kernels)
    # retime words the line for --on; without --on the profile is the input's own
    line = line.replace("the --on profile's", f"{roofs_from}'s")
    result = w.move_hardware(basis, kernels, target, judge=roof, change=change)
    from ..model.tf32_note import tf32_note

    # fp32 convs onto an Ampere+ GPU: PyTorch runs them on TF32 (review s28 R3 F7)
    tf32 = tf32_note([k for k, _ in result.moves], target)
    said_after = [n for n in (tf32, alone, own) if n]
    if said_after:
        result = replace(result, after=replace(result.after,
                                               notes=(*result.after.notes, *said_after)))
    # which roof the efficiencies are fractions of, where the assumption is read
    return replace(result, assumption=f"{result.assumption}; {line}{said}")


def _check_roof_known(roof, kernels, *, precision=None, hardware=None) -> None:
    """An error for --hardware or --precision on the envelope roof (no --on, no peaks in
    the files: the ceilings are the best these kernels reached). --hardware carried that
    share onto the target, so the fastest kernel, 100 % of the envelope, was predicted at
    the H100's roof: NERSC GPP output1.csv read 198x where its 55 % of the RTX 4060 Laptop
    GPU's roof gives 108x; --precision fp32 read 1.00x, the envelope having no fp32
    ceiling (s33 C)."""
    from ..ingest.profile_checks import cc_suggestion, recorded_cc
    from ..ingest.profile_envelope import ENVELOPE_NAME

    if roof.name != ENVELOPE_NAME or (precision is None and hardware is None):
        return
    what = (f"--hardware '{hardware}' carries each kernel's share of its roof onto the "
            f"target, " if hardware is not None else
            f"--precision {precision} needs the machine's {precision} ceiling, ")
    raise InputError(
        f"{what}but no roof is known: without --on (and no peaks in the files) the "
        f"ceilings are the best these kernels reached, a lower bound on which the fastest "
        f"reads 100 %, so the prediction would be wrong; pass --on the device they ran on "
        f"(a catalog name, a profile from `rooflab probe`, or the .ncu-rep)"
        + cc_suggestion(recorded_cc(kernels)))


def _targets(hardware: str, kernels, ran_on=()) -> tuple[tuple, str]:
    """--hardware's roofs ('NAME@boost' accepted, as --on takes it) and what was said of
    their clock: the catalog GPU the kernels ran on (the --on roof's, or the device the
    file records) is taken at the SM clock ncu recorded, as --on's roof is, so moving to
    the same GPU is like for like (it read 1.46x, the boost clock over ncu's locked base
    clock; review s26 v2 F2); another GPU runs at its own clock (listed peaks); '@boost'
    keeps the listed peaks, and the share of the gain that is the clock is said."""
    from ..hardware.resolve import load_roofs
    from ..ingest.profile_checks import catalog_clock_hz, kernels_clock, recorded_cc, split_boost
    from ..model.dies import recorded_roof, software_devices

    spec, boost = split_boost(hardware)
    clock = kernels_clock(kernels) if recorded_cc(kernels) else None
    out, said = [], ""
    for t in load_roofs(spec):   # a profile: measured, then nominal (both kinds)
        # kernels run on one device: on an MI250X, one die (dies.recorded_roof, s28 R4 F3)
        dies = software_devices(t)
        t, _ = recorded_roof(t)
        if dies > 1:
            said += (f"; {t.name} is {dies} devices to software: each kernel moves onto one "
                     f"die, the package's figures / {dies}")
        top = catalog_clock_hz(t) if clock and _ran_on(t, kernels, ran_on) else None
        if top is None or clock >= 0.99 * top:
            out.append(t)
        elif boost:
            out.append(t)
            said += (f"; target at its listed peaks (boost {top / 1e9:.2f} GHz), the kernels "
                    f"ran at {clock / 1e9:.2f} GHz: {fmt_times(top / clock)} of the gain is that "
                    f"clock alone; drop '@boost' to take the target at the recorded clock")
        else:
            from ..ingest.profile_checks import at_recorded_clock

            scaled, note = at_recorded_clock(t, clock)
            out.append(scaled)
            said += "; target " + note.removeprefix("; note: ").replace("--on '", "--hardware '")
    return tuple(out), said


def _ran_on(target, kernels, ran_on) -> bool:
    """Whether the target roof is the GPU the kernels ran on: the --on roof's name, or the
    catalog entry of the device name the file records (a .ncu-rep without --on)."""
    from ..ingest.profile_checks import device_mismatch, recorded_device

    if device_mismatch(target, kernels):
        return False
    if target.name in {r.name for r in ran_on}:
        return True
    ran = recorded_device(kernels)
    from ..hardware.catalog import match_device_name

    entry = match_device_name(ran) if ran else None
    return entry is not None and entry.roof.name == target.name


def register(app) -> None:
    @app.command("whatif", help=HELP)
    def whatif(
        files: Files,
        on: On = None,
        precision: str = typer.Option(None, "--precision", help="do the math in this "
                                                                "precision (fp16, bf16, fp8...)"),
        quantize: str = typer.Option(None, "--quantize", help="store weights as int8/int4/fp8"),
        group: int = typer.Option(None, "--group", help="with --quantize int4/int8: one fp16 "
                                                        "scale per N weights (GPTQ/AWQ, llm "
                                                        "--weights: 128); default: none"),
        sparsity: str = typer.Option(None, "--sparsity", help="prune weights 2:4 (structured "
                                                              "sparsity on tensor cores)"),
        fuse: str = typer.Option(None, "--fuse", help="fuse these kernels: a,b,c"),
        batch: int = typer.Option(None, "--batch", help="change the batch to N"),
        bytes_scale: float = typer.Option(None, "--bytes-scale",
                                          help="bytes x F at every level, FLOP unchanged "
                                               "(0.25: AI x 4 by more reuse)"),
        hardware: str = typer.Option(None, "--hardware", help="move to other hardware "
                                                              "(name or profile)"),
        only: list[str] = typer.Option(
            None, "--only", metavar="NAMES",
            help="apply to these kernels only: a,b (or --only a --only b; a kernel's name "
                 "is taken whole, commas and all)"),
        output: str = typer.Option(None, "-o", "--output", help="chart .png/.svg or .json"),
        json_out: bool = typer.Option(False, "--json", help="print the what-if as JSON"),
    ) -> None:
        from rich.markup import escape

        from .common import check_output, emit_json, wide_console, wrote
        from .inputs import load_inputs

        check_output(output, (".json", ".png", ".svg"), inputs=[*files, on, hardware])
        inputs = load_inputs(files, [on] if on else [])
        from .whatif_train import for_whatif, train_file_ranks

        # a train --dp file's communication on the --on device's link (s30), on its ring
        ranks = train_file_ranks(files, inputs.kernels)
        inputs, ranks = for_whatif(inputs, on, ranks, files)
        result = run_whatif(inputs.roof, inputs.kernels, precision=precision,
                            quantize=quantize, fuse=fuse, batch=batch, hardware=hardware,
                            only=only, sparsity=sparsity, bytes_scale=bytes_scale,
                            group=group, on_roofs=_from_roofs(inputs, on),
                            roofs_from="the --on profile" if on else "the input's profile",
                            ranks=ranks, files=files)
        # what `rooflab report` would say of the moved kernels' measurements (review 16b
        # #11: a fusion of kernels above their roof printed its capped gain without a word)
        doubts = _read_with_care(result, inputs)
        if not json_out:
            inputs.print_notes()
        # the document only where it is written: at 100k kernels it held ~280 MB beside
        # the what-if for a terminal table that reads none of it (s26 fB)
        data = _document(result, inputs, doubts, hardware, files) if json_out or output \
            else None
        if output:
            _write(output, result, data)
        if json_out:
            emit_json(data)
            if output:
                wrote(output)   # stderr: stdout holds only the JSON
            return
        del data   # written: the table reads the what-if itself
        llm = _llm_doc(files)
        for line in doubts:
            wide_console().print(f"[bold red]read with care:[/] {escape(line)}", style="red",
                                 soft_wrap=True)
        wide_console().print(_table(result, llm))   # a pipe or log: names whole, one line each
        for line in _llm_lines(llm, result, hardware):
            wide_console().print(line, soft_wrap=True)
        if output:
            wrote(output)


def _document(result, inputs, doubts: list[str], hardware, files) -> dict:
    """The what-if's JSON document (--json, -o w.json): describe() with the warnings, the
    notes, the efficiency basis and the llm block's extras; its rows and the analysis after
    are made as they are written (Streamed: at 100,000 kernels the whole document, ~250 MB
    of dicts and a 240 MB text, peaked at 2.2 GB; s32)."""
    from ..model.roof_schema import judged_kind
    from ..model.whatif_floors import describe

    data = describe(result, streamed=True)
    if doubts:
        data["warnings"] = doubts
    # what the reader must know of the kernels and the roof (a GPU of another compute
    # capability, the best-achieved roof), as report and plot say it (cli/inputs.py): in
    # the JSON (stdout stays one document, stderr quiet), else on stderr ... and a
    # precision the file did not give (judged fp32; review r1 F3): the JSON keeps the
    # warning stderr gave, as report's does
    assumed = precision_assumed_note(inputs.kernels)
    data["notes"] = [*inputs.notes, *([assumed] if assumed else [])]   # [] when empty
    if hardware is not None:
        # the kinds the numbers judge by: ncu's clock-scaled roof is "derived" (s27 v2-F8)
        data["efficiency_basis"] = {"name": result.before.roof.name,
                                    "kind": judged_kind(result.before.roof),
                                    "target_kind": judged_kind(result.after.roof)}
    data.update(_llm_extras(_llm_doc(files), result, hardware))
    return data


def _read_with_care(result, inputs) -> list[str]:
    """model.whatif_warnings.move_warnings on the machine behind the roof the kernels were judged
    on (report.markdown.machine_for, as `rooflab report` finds it: a CPU's caches decide
    its cache-resident check)."""
    from ..model.whatif_warnings import move_warnings
    from ..report.markdown import machine_for

    return move_warnings(result, machine_for(result.before, inputs.profile))


def _from_roofs(inputs, on: str | None) -> tuple:
    """The "from" machine's roofs for --hardware's like-for-like basis, the judging roof
    first: every roof --on holds; without --on, every roof of the profile the input carries
    (a demo document's measured and nominal), so a catalog target is taken against the
    file's own nominal roof, not its measured one. Other files' roofs are left out: they
    may be of another machine, whose efficiency says nothing of these kernels."""
    if on:
        return inputs.roofs
    own = inputs.profile.roofs if inputs.profile is not None else ()
    return own if own and own[0] == inputs.roof else (inputs.roof,)


def _write(path: str, result, data) -> None:
    from pathlib import Path

    from ..files import write_json

    if Path(path).suffix.lower() == ".json":
        write_json(path, data)
        return
    from ..report.chart import plot_roofline, save_figure

    roofs = [result.after.roof]
    if result.before.roof != result.after.roof:
        roofs.append(result.before.roof)
    kernels, arrows = _chart_moves(result)
    level = "DRAM" if result.after.roof.find_memory("DRAM") else None
    display = plot_roofline(roofs, kernels, level=level, arrows=arrows,
                            title=_chart_title(result), before_roof=result.before.roof)
    save_figure(display, path)


def _chart_title(result) -> str:
    """'what if on NVIDIA A100 80GB SXM: weights -> int4': every chart's title names its
    machine (docs/plot.md); a move between machines names both."""
    before, after = result.before.roof.name, result.after.roof.name
    if before != after:
        return f"what if: {result.label} ({before} -> {after})"
    return f"what if on {after}: {result.label}"


def _chart_moves(result) -> tuple[list, list]:
    """The chart's kernels and arrows, each end named as `compare -o` names its pair
    (review 18c F9: both ends read "(predicted)", every name twice): 'rope (before)' and
    'rope (after, 3.80x)', the speed-up from the measured times, else from the work floors
    as the table gives it. A kernel the change leaves as it was (same FLOP, bytes, time
    and roof) is drawn once, under its own name, with no arrow."""
    from ..model.whatif_floors import move_floors

    same_roof = result.before.roof == result.after.roof
    renamed: dict[int, object] = {}
    kernels, arrows = [], []
    for (old, new), (b, a) in zip(result.moves, move_floors(result), strict=True):
        if same_roof and _unchanged(old, new):
            continue
        fb, fa = b[0], a[0]
        sp = (old.seconds / new.seconds if old.seconds and new.seconds
              else fb / fa if fb and fa else None)
        gain = f", {fmt_times(sp)}" if sp else ""
        if id(new) not in renamed:   # fused members share one kernel after
            renamed[id(new)] = new.with_(name=f"{new.name} (after{gain})")
        before = old.with_(name=f"{old.name} (before)")
        kernels.append(before)
        arrows.append((before, renamed[id(new)]))
    after = [renamed.get(id(k), k) for k in result.after.kernels]
    return after + kernels, arrows


def _unchanged(old, new) -> bool:
    return (old.flop == new.flop and old.bytes == new.bytes and old.seconds == new.seconds
            and old.calls == new.calls)
