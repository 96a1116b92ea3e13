"""rooflab whatif — move kernels under one change and predict where they land."""

from __future__ import annotations

import typer

from ..errors import InputError
from ..model.choose import WITH_LAUNCHES
from .options import Files, On

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
               on_roofs=None, roofs_from="the --on profile"):
    """Dispatch to the one model/whatif function the options name. on_roofs: every roof of
    the machine the kernels are judged on (--on's, else the profile the input carries: a
    profile holds measured, then nominal), for --hardware's like-for-like basis;
    roofs_from: where they came from, as the assumption line names it."""
    from ..model import whatif as w

    given = [x for x in (precision, quantize, fuse, batch, hardware, sparsity, bytes_scale)
             if x is not None]
    if len(given) != 1:
        raise InputError("give exactly one change: --precision, --quantize, --sparsity, "
                         "--fuse, --batch, --bytes-scale or --hardware")
    if group is not None and quantize is None:
        raise InputError("--group goes with --quantize int4/int8 (weights per scale)")
    if precision is not None:
        return w.change_precision(roof, kernels, precision, names=_names(only, kernels))
    if quantize is not None:
        return w.quantize_weights(roof, kernels, quantize, names=_names(only, kernels), group=group)
    if sparsity is not None:
        if sparsity.replace(" ", "") != "2:4":
            raise InputError(f"--sparsity takes 2:4 (the structured sparsity tensor cores "
                             f"run); got '{sparsity}'")
        return w.sparsify(roof, kernels, names=_names(only, kernels))
    if fuse is not None:
        return w.fuse(roof, kernels, _names(fuse, kernels))
    if batch is not None:
        return w.change_batch(roof, kernels, batch, names=_names(only, kernels))
    if bytes_scale is not None:
        return w.scale_bytes(roof, kernels, bytes_scale, names=_names(only, kernels))
    from dataclasses import replace

    from ..hardware.resolve import load_roofs
    from ..model.retime import efficiency_basis

    targets = load_roofs(hardware)   # a profile: measured, then nominal (both kinds)
    if not targets:
        raise InputError(f"--hardware '{hardware}' holds no roof; give a catalog name "
                         f"(`rooflab specs list`) or a profile from `rooflab probe`")
    basis, target, line = efficiency_basis(on_roofs or (roof,), targets, kernels)
    # retime words the line for --on; without --on the profile is the input's own
    line = line.replace("the --on profile's", f"{roofs_from}'s")
    result = w.move_hardware(basis, kernels, target)
    # which roof the efficiencies are fractions of, where the assumption is read
    return replace(result, assumption=f"{result.assumption}; {line}")


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

        from ..model.whatif import describe
        from .common import check_output, emit_json, err_console, wide_console
        from .inputs import load_inputs

        check_output(output, (".json", ".png", ".svg"), inputs=[*files, on, hardware])
        inputs = load_inputs(files, [on] if on else [])
        result = run_whatif(inputs.roof, inputs.kernels, precision=precision,
                            quantize=quantize, fuse=fuse, batch=batch, hardware=hardware,
                            only=only, sparsity=sparsity, bytes_scale=bytes_scale,
                            group=group, on_roofs=_from_roofs(inputs, on),
                            roofs_from="the --on profile" if on else "the input's profile")
        data = describe(result)
        # what `rooflab report` would say of the moved kernels' measurements (review 16b
        # #11: a fusion of kernels above their roof printed its capped gain without a word)
        doubts = _read_with_care(result, inputs)
        if doubts:
            data["warnings"] = doubts
        # what the reader must know of the kernels and the roof (a GPU of another compute
        # capability, the best-achieved roof), as report and plot say it (cli/inputs.py):
        # in the JSON (stdout stays one document, stderr quiet), else on stderr
        if inputs.notes:
            data["notes"] = list(inputs.notes)
        if not json_out:
            inputs.print_notes()
        if hardware is not None:
            data["efficiency_basis"] = {"name": result.before.roof.name,
                                        "kind": result.before.roof.kind,
                                        "target_kind": result.after.roof.kind}
        if json_out or output:
            data.update(_llm_extras(_llm_doc(files), result, hardware))
        if output:
            _write(output, result, data)
        if json_out:
            emit_json(data)
            return
        llm = _llm_doc(files)
        for line in doubts:
            wide_console().print(f"[bold red]read with care:[/] {escape(line)}", style="red",
                                 soft_wrap=True)
        wide_console().print(_table(result, llm))   # a pipe or log: names whole, one line each
        for line in _llm_lines(llm, result, hardware):
            wide_console().print(line, soft_wrap=True)
        if output:
            err_console().print(f"wrote {output}")


def _read_with_care(result, inputs) -> list[str]:
    """model.whatif.move_warnings on the machine behind the roof the kernels were judged
    on (report.markdown.machine_for, as `rooflab report` finds it: a CPU's caches decide
    its cache-resident check)."""
    from ..model.whatif import move_warnings
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


def _bound_cell(before, after) -> str:
    """The bound after the change, and the one before when it flipped (seed 000 §3.3: a
    kernel compute-bound in fp32 can be memory-bound in fp16)."""
    if after is None:
        return "-"
    if before is not None and before.bound != after.bound:
        return f"{after.bound} (was {before.bound})"
    return after.bound


def _llm_doc(files: list[str]) -> dict | None:
    """The `llm` block of the first `rooflab llm --json` document among the files, or None:
    it holds what the kernels alone do not (footprint, the TP all-reduces, the pipeline)."""
    from ..files import load_json
    from ..ingest.kernelfile import file_kind
    from ..model.schema import llm_part

    for path in files:
        # rooflab's own JSON only: a .json may be a (gzipped) torch trace
        if not path.lower().endswith(".json") or file_kind(path) != "rooflab":
            continue
        # its figures checked as choose and compare check them (a string --tp was a
        # traceback here, a "3 GB" footprint skipped the fit without a word)
        llm = llm_part(load_json(path), path)
        if llm is not None:
            return llm
    return None


def _new_comm_s(llm: dict, hardware: str | None) -> tuple[float, str] | None:
    """The file's TP all-reduce time on the what-if's device, and where its link is from:
    on --hardware with the file's link taken from the catalog, the new device's catalog
    link (the bandwidth part recomputed, the latency part kept); otherwise the file's own
    time (the same link). None without --tp or without the figures."""
    par = llm.get("parallel")
    need = ("comm_s", "allreduces_per_step", "allreduce_bytes", "link_bytes_per_s")
    if not isinstance(par, dict) or any(par.get(f) is None for f in need):
        return None   # numbers where present (schema.llm_part); a part missing: no line
    tp = int(par.get("tp") or 1)
    # the vocab-parallel logits gather (review 18d E) rides the same link: a ring
    # all-gather moving (tp-1)/tp of its bytes, its latency part kept as the file has it
    gather_s = float(par.get("logits_gather_s") or 0.0)
    gather_moved = (tp - 1) / tp * float(par.get("logits_gather_bytes") or 0.0)
    comm = float(par["comm_s"]) + gather_s
    kind = (par.get("link_provenance") or {}).get("kind")
    if hardware is None or kind != "catalog":
        return comm, f"the file's link ({par.get('link', 'as in the file')})"
    from types import SimpleNamespace

    from ..errors import RooflabError
    from ..hardware.catalog import lookup
    from ..model.parallel import allreduce_link_bytes
    from ..workloads.llm.links import tp_link

    try:
        dev = lookup(hardware)
        new = tp_link(SimpleNamespace(tp=tp), None, dev, None, None, None).link
    except (RooflabError, AttributeError):
        return comm, f"the file's link (no catalog link for {hardware})"
    moved = float(par["allreduces_per_step"]) * allreduce_link_bytes(
        float(par["allreduce_bytes"]), tp) + gather_moved
    latency = comm - moved / float(par["link_bytes_per_s"])
    return latency + moved / new.bus_bytes_per_s, f"{new.source}"


def _llm_extras(llm: dict | None, result, hardware: str | None) -> dict:
    """whatif --json keys for an llm document: whether the model fits the what-if's
    device, and the TP all-reduces the kernels leave out (review 11b #8, #13)."""
    if llm is None:
        return {}
    out: dict = {}
    fit = _fit(llm, result, hardware)
    if fit is not None:
        out["fit"] = fit
    comm = _new_comm_s(llm, hardware) if _batch_kept(result) else None
    if comm is not None:
        from ..model.whatif import total_floors

        (wb, wa) = total_floors(result)["work"]
        par = llm["parallel"]
        before = par["comm_s"] + float(par.get("logits_gather_s") or 0.0)
        out["parallel"] = {"tp": par.get("tp"),
                           "allreduces_per_step": par.get("allreduces_per_step"),
                           "comm_before_s": before, "comm_after_s": comm[0],
                           "comm_link": comm[1]}
        if wb and wa:
            out["parallel"].update({"total_before_tpot_s": wb + before,
                                    "total_after_tpot_s": wa + comm[0]})
    return out


def _batch_kept(result) -> bool:
    """Whether the what-if leaves the batch alone (a batch change resizes the all-reduces,
    which this line does not recount)."""
    from ..model.whatif import meta_batch

    return all(meta_batch(old) == meta_batch(new) for old, new in result.moves)


def _fit(llm: dict, result, hardware: str | None) -> dict | None:
    """Whether the document's footprint (bytes per device) fits the what-if's device, as
    `rooflab choose` judges it: {"device", "needs_bytes", "memory_bytes", "fits"}; None
    when the footprint or the memory is unknown."""
    from .choose import _device_memory

    if hardware is None:   # other what-ifs change the bytes the footprint counted
        return None
    fp = llm.get("footprint")
    need = fp.get("total_bytes") if isinstance(fp, dict) else None
    mem = _device_memory(hardware)
    if not isinstance(need, (int, float)) or not mem:
        return None
    return {"device": result.after.roof.name, "needs_bytes": float(need),
            "memory_bytes": float(mem), "fits": need <= mem}


def _llm_lines(llm: dict | None, result, hardware: str | None) -> list[str]:
    """The lines an llm document adds under the table: the all-reduces and the fit."""
    from ..units import fmt_seconds, si_apart

    extras = _llm_extras(llm, result, hardware)
    out = []
    par = extras.get("parallel")
    if par and "total_before_tpot_s" in par:
        tb, ta = par["total_before_tpot_s"], par["total_after_tpot_s"]
        out.append(f"with the {par['allreduces_per_step']} all-reduces and the logits "
                   f"gather of --tp "
                   f"{par['tp']}: {fmt_seconds(par['comm_before_s'])} -> "
                   f"{fmt_seconds(par['comm_after_s'])} (on {par['comm_link']}), so the "
                   f"TPOT floor {fmt_seconds(tb)} -> {fmt_seconds(ta)} ({tb / ta:.2f}x), as "
                   f"`rooflab llm` gives it")
    fit = extras.get("fit")
    if fit and not fit["fits"]:
        from .choose import fit_remedy

        need, mem = si_apart(fit["needs_bytes"], fit["memory_bytes"], "B")
        out.append(f"does not fit: the model needs {need} per device (weights + KV + "
                   f"activations, from the llm document) > the memory of {fit['device']} "
                   f"({mem}); the floor assumes it fit "
                   f"({fit_remedy([fit['device']])})")
    return out


def _scope(llm: dict | None) -> str:
    """What the kernels of an llm document cover under --tp/--pp (as `rooflab llm
    --compare` says it), or `rooflab llm`'s TPOT floor for one device."""
    if llm is None:
        return "(`rooflab llm`'s TPOT floor)"
    st = llm.get("settings") or {}
    tp, pp = int(st.get("tp") or 1), int(st.get("pp") or 1)
    par = llm.get("parallel") if isinstance(llm.get("parallel"), dict) else {}
    tp = int(par.get("tp") or tp)
    parts = []
    if tp > 1:
        parts.append(f"per device of {tp}, without the all-reduces")
    if pp > 1:
        parts.append(f"all {pp} pipeline stages, without stage transfers")
    return f"({', '.join(parts)})" if parts else "(`rooflab llm`'s TPOT floor)"


def _table(result, llm: dict | None = None):
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from ..model.choose import split_whole_steps
    from ..units import fmt_seconds

    # A whole measured step beside its own kernels (`rooflab llm --tpot-ms`) is not one
    # more kernel: it gets its own line under the table, and the totals leave it out.
    steps = {id(k) for k in split_whole_steps([old for old, _ in result.moves])[1]}
    rows, floored, step_lines = _rows(result, steps)
    every = bool(floored) and all(floored)
    heads = (("work floor before", "work floor after", "speed-up (work floors)") if every
             else ("time before", "time after", "speed-up"))
    t = Table(title=f"What if: {result.label}", title_justify="left")
    for h in ("kernel", "AI before -> after", *heads, "bound after"):
        t.add_column(h, justify="left" if h in ("kernel", "bound after") else "right")
    held = _held(result)
    for name, ai, tb, ta, sp, bound, floor in rows:
        mark = " floor" if floor and not every else ""
        other = held.get(name)
        t.add_row(escape(name), ai, fmt_seconds(tb) + mark,
                  fmt_seconds(ta) + mark if other is None else _span(ta, other),
                  "-" if sp is None else f"{sp:.2f}x{mark}" if other is None or not tb else
                  _span(tb / max(ta, other), tb / min(ta, other), "x"), bound)
    parts: list = [t]
    totals = None
    over_all, over_moved = _scopes(result, steps)
    if result.speedup and not steps:
        totals = result.total_before_s, result.total_after_s
        slow_total = result.total_after_gap_held_s
        parts.append(Text(
            f"total{over_all}: {fmt_seconds(result.total_before_s)} -> "
            + (f"{fmt_seconds(result.total_after_s)} ({result.speedup:.2f}x)"
               if slow_total is None else
               f"{_span(result.total_after_s, slow_total)} ("
               + _span(result.total_before_s / max(result.total_after_s, slow_total),
                       result.total_before_s / min(result.total_after_s, slow_total), "x")
               + ")")))
    parts += [Text(line) for line in _held_lines(result)]
    measured = totals is not None   # the file's measured times, not the floors
    floor_lines = _floor_lines(result, over_moved)
    if floor_lines and totals is None and every:
        from ..model.whatif import total_floors

        totals = total_floors(result)["work"]
    parts += [Text(line) for line in floor_lines]
    # per token: the kernels the batch moved only; under --only the rest of the file
    # makes no more tokens (review 12a #2: 19.2 ms / 64 mixed them in)
    line = _per_token_line(result, _moved_totals(result, steps) if measured else totals,
                           steps)
    if line:
        parts.append(Text(line))
    parts += [Text(line) for line in step_lines]
    if any(floored) or floor_lines:
        parts.append(Text(f"work floor: max(FLOP / P, bytes / B) per kernel at 100 % of the "
                          f"roof, summed {_scope(llm)}; {WITH_LAUNCHES}: each "
                          f"kernel at least max(work floor, calls x launch floor), summed "
                          f"(the same in llm and choose); derived, lower bounds"
                          + ("; a row marked 'floor' has no measured time, so it shows its "
                             "work floor" if any(floored) and not every else ""),
                          style="dim"))
    parts.append(Text(f"assumes: {result.assumption}", style="dim"))
    # A ceiling the new roof lacks (fp8 math on an A100) falls back to another; say which.
    parts += [Text(f"note: {n}", style="dim") for n in result.after.notes
              if n not in result.before.notes]
    return Group(*parts)


def _span(a: float, b: float, unit: str = "") -> str:
    """'3.75 ms-8.89 ms' (seconds) or '1.69x-4.00x' (unit 'x'), the smaller first."""
    from ..units import fmt_seconds

    lo, hi = sorted((a, b))
    return f"{lo:.2f}x-{hi:.2f}x" if unit == "x" else f"{fmt_seconds(lo)}-{fmt_seconds(hi)}"


def _held(result) -> dict[str, float]:
    """{row name: time with the gap held fixed} for the whole steps with one launch assumed
    (model.retime.gap_held): their time after is a range, not the optimistic end alone."""
    from ..model.retime import gap_held

    return {old.name: slow for old, new in result.moves
            if (slow := gap_held(new)) is not None and old.name == new.name}


def _held_lines(result) -> list[str]:
    """Why a row's time after is a range (review 18a F2): a whole step timed as one point
    (opkind.is_whole_step), whose gap above its floor may not move with its bytes."""
    from ..model.advice import step_words
    from ..model.retime import gap_held
    from ..units import fmt_seconds

    out = []
    for old, new in result.moves:
        slow = gap_held(new)
        if slow is None:
            continue
        gap = new.meta.get("gap_held_s", 0.0)
        out.append(f"{old.name}: {step_words(old, result.before.roof)}: its "
                   f"{fmt_seconds(gap)} above its floor (the gap below the roof: host time, "
                   f"kernel efficiency{'' if old.calls > 1 else ', launches'}) is scaled with "
                   f"the work for {fmt_seconds(new.seconds)} and held fixed for "
                   f"{fmt_seconds(slow)} ({_held_reason(result)})")
    return out


def _held_reason(result) -> str:
    """Why the gap may stay, in the words of the change asked (review 19a N5: a batch range
    explained itself with quantization)."""
    label = result.label.lower()
    if "batch" in label:
        return ("the host time between launches does not grow with the batch, and the "
                "kernels' efficiency need not change")
    if result.before.roof != result.after.roof:
        return ("other hardware need not shrink the host's share or the kernels' "
                "inefficiency")
    return "seed 004 Q6: quantization moves the point's AI, not the gap below the slope"


def _scopes(result, steps: set[int]) -> tuple[str, str]:
    """The words naming each line's kernels when --only changed some of them: the total
    counts every kernel (the others at their own time), the work floors only the changed
    ones (review 16a L5: "total 1.36 s -> 1.11 s" over both kernels beside "work floor
    185 ms -> 123 ms" over one, unlabelled). ('', '') where every kernel moved or a fusion
    puts the floors on the whole step too."""
    from ..model.choose import split_whole_steps
    from ..model.whatif import fused

    work = split_whole_steps(result.before.kernels)[0]
    moved = list(dict.fromkeys(old.name for old, _ in result.moves if id(old) not in steps))
    if fused(result) or not moved or len(moved) >= len(work):
        return "", ""
    names = ", ".join(moved[:3]) + (f" and {len(moved) - 3} more" if len(moved) > 3 else "")
    rest = len(work) - len(moved)
    return (f" (all {len(work)} kernels, {rest} of them unchanged)",
            f" ({names} only)")


def _floor_lines(result, only: str = "") -> list[str]:
    """The work floor before -> after with its ratio (the headline, as `rooflab llm`'s TPOT
    floor), and the same with launches (as llm and choose give it): empty where a floor is
    unknown. only: the words naming the changed kernels when --only left others alone
    (_scopes), so the floors do not read as the total's scope."""
    from ..model.whatif import fused, moved_floors, total_floors
    from ..units import fmt_seconds

    floors = total_floors(result)
    whole = fused(result)
    scope = " (whole step)" if whole else only
    out = []
    for key, label in (("work", "work floor"), ("with_launches", WITH_LAUNCHES)):
        fb, fa = floors[key]
        if fb and fa:
            out.append(f"{label}{scope}: {fmt_seconds(fb)} -> {fmt_seconds(fa)} "
                       f"({fb / fa:.2f}x)")
    (wb, wa), (lb, la) = floors["work"], floors["with_launches"]
    if len(out) == 2 and lb / la < 0.995 * wb / wa:
        out[1] += ("; the launches do not shrink with the work, so this ratio is smaller "
                   "(CUDA graphs or fused kernels remove them)")
    if whole and out:
        # the fused kernels' own change is a detail: on the step it is diluted by the rest
        (mb, ma) = moved_floors(result)["with_launches"]
        if mb and ma:
            out.append(f"the fused kernels alone, {WITH_LAUNCHES}: {fmt_seconds(mb)} -> "
                       f"{fmt_seconds(ma)} ({mb / ma:.2f}x; saved {fmt_seconds(mb - ma)})")
    return out


def _moved_totals(result, steps: set[int]) -> tuple[float, float] | None:
    """Measured time before and predicted after of the kernels that moved (a whole
    measured step beside its kernels left out); None where one has no time."""
    pairs = [(old.seconds, new.seconds) for old, new in result.moves if id(old) not in steps]
    if not pairs or any(b is None or a is None for b, a in pairs):
        return None
    return float(sum(b for b, _ in pairs)), float(sum(a for _, a in pairs))


def _per_token_line(result, totals, steps: set[int] = frozenset()) -> str:
    """Under a batch change the step gets slower while it makes more tokens: say the time
    per token too, or "8.07 ms -> 8.77 ms (0.92x)" reads as a loss (batch 1 -> 16 is
    14.7x the tokens/s). `totals`: of the moved kernels only, so the line says over which
    kernels when --only left others alone (they make no more tokens)."""
    from ..model.choose import split_whole_steps
    from ..model.whatif import meta_batch

    if totals is None:
        return ""
    b0 = {meta_batch(old) for old, _ in result.moves}
    b1 = {meta_batch(new) for _, new in result.moves}
    if len(b0) != 1 or len(b1) != 1 or b0 == b1:
        return ""
    (before_b,), (after_b,) = b0, b1
    from ..units import fmt_seconds

    moved = [old.name for old, _ in result.moves if id(old) not in steps]
    every = len(moved) == len(split_whole_steps(result.before.kernels)[0])
    names = (", ".join(moved[:3]) + (f" and {len(moved) - 3} more" if len(moved) > 3
                                     else ""))
    over, rest = ("", "") if every else (f" over {names} only",
                                         "; the other kernels are not batched")
    tb, ta = totals[0] / before_b, totals[1] / after_b
    # a whole step's range (its gap held): both ends per token too (review 19a N5)
    from ..model.retime import gap_held

    extra = sum(slow - new.seconds for old, new in result.moves
                if id(old) not in steps and (slow := gap_held(new)) is not None)
    if extra:
        slow = (totals[1] + extra) / after_b
        return (f"per token{over} (batch {before_b} -> {after_b} sequences per step{rest}): "
                f"{fmt_seconds(tb)} -> {_span(ta, slow)}, "
                f"{_span(tb / max(ta, slow), tb / min(ta, slow), 'x')} the tokens/s")
    return (f"per token{over} (batch {before_b} -> {after_b} sequences per step{rest}): "
            f"{fmt_seconds(tb)} -> {fmt_seconds(ta)}, {tb / ta:.2f}x the tokens/s")


def _rows(result, steps: set[int]) -> tuple[list[tuple], list[bool], list[str]]:
    """The table's rows (name, AI before -> after, time before, after, speed-up, bound,
    floor?), whether each row shows floors, and the lines for whole measured steps."""
    from ..units import fmt_ai

    after = {p.kernel: p for p in result.after.primary()}
    before = {p.kernel: p for p in result.before.primary()}
    rows, floored, step_lines = [], [], []
    prev_new, members = None, []
    # rows without a measured time show their work floors, as the headline line does
    from ..model.whatif import move_floors

    work = [(b[0], a[0]) for b, a in move_floors(result)]
    for (old, new), (fb, fa) in zip(result.moves, work, strict=True):
        b, a = before.get(old.name), after.get(new.name)
        sp = old.seconds / new.seconds if old.seconds and new.seconds else None
        if id(old) in steps:
            step_lines.append(_step_line(old, new, b, a, sp))
            continue
        # no measured time to move: show the floors (derived from the roof), as floors
        floor = old.seconds is None and new.seconds is None and bool(fb and fa)
        floored.append(floor)
        times = ((fb, fa, fb / fa) if floor else (old.seconds, new.seconds, sp))
        if rows and new is prev_new and new.meta.get("fused"):
            # Fused members are one row: their summed time before against the one kernel
            # after (one row each read "1.00x" while the total said 3x).
            members.append(old)
            prev_tb, this_tb = rows[-1][2], times[0]
            # a member at 0.0 s adds nothing; only an unknown time makes the sum unknown
            tb = (prev_tb + this_tb if prev_tb is not None and this_tb is not None
                  else None)
            nbytes = sum(m.bytes.get(b.level, 0.0) for m in members) if b else 0.0
            ai_before = sum(m.total_flop for m in members) / nbytes if nbytes else None
            names = [m.name for m in members]
            rows[-1] = (f"{new.name} (fused)" if new.name == "+".join(names) else
                        f"{' + '.join(names)} -> {new.name}",
                        f"{fmt_ai(ai_before)} -> {fmt_ai(a.ai if a else None)}",
                        tb, times[1], tb / times[1] if tb and times[1] else None,
                        rows[-1][5], floor)
            continue
        prev_new, members = new, [old]
        rows.append((old.name if old.name == new.name else f"{old.name} -> {new.name}",
                     f"{fmt_ai(b.ai if b else None)} -> {fmt_ai(a.ai if a else None)}",
                     *times, _bound_cell(b, a), floor))
    return rows, floored, step_lines


def _step_line(old, new, b, a, speedup) -> str:
    """The measured whole step, moved like a kernel at the fraction of its roof it reaches;
    a range where its gap may be held (review 19a N1: the llm route printed one 3.01x)."""
    from ..model.retime import gap_held
    from ..units import fmt_ai, fmt_seconds

    ai = f"AI {fmt_ai(b.ai if b else None)} -> {fmt_ai(a.ai if a else None)}"
    if not (old.seconds and new.seconds):
        return f"{old.name}: no measured time to move ({ai})"
    slow = gap_held(new)
    if slow is not None:
        return (f"{old.name}: {fmt_seconds(old.seconds)} -> {_span(new.seconds, slow)} "
                f"predicted ({_span(old.seconds / slow, speedup, 'x')}: its "
                f"{fmt_seconds(new.meta.get('gap_held_s', 0.0))} above its floor scaled with "
                f"the work, or held fixed); {ai} (the whole step, not added to the kernels)")
    return (f"{old.name}: {fmt_seconds(old.seconds)} -> {fmt_seconds(new.seconds)} predicted "
            f"({speedup:.2f}x, at the efficiency it reaches now); {ai} (the whole step, not "
            f"added to the kernels)")


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
    from ..model.whatif import move_floors

    same_roof = result.before.roof == result.after.roof
    renamed: dict[int, object] = {}
    kernels, arrows = [], []
    for (old, new), (b, a) in zip(result.moves, move_floors(result), strict=True):
        if same_roof and _unchanged(old, new):
            continue
        fb, fa = b[0], a[0]
        sp = (old.seconds / new.seconds if old.seconds and new.seconds
              else fb / fa if fb and fa else None)
        gain = f", {sp:.2f}x" if sp else ""
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
