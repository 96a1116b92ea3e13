"""rooflab choose — rank hardware for a set of kernels (seed 002: hardware choice)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import InputError
from ..units import fmt_fraction
from .choose_fit import fit_remedy
from .choose_inputs import (
    _footprint,
    _least,
    _llm,
    _parallel,
    _tp_block,
    load_work,
    train_inputs,
)
from .options import Files

HELP = """Rank devices for a kernel set by the time "with launches" at each roof (per kernel
the larger of its work floor, max(FLOP / P, bytes / B), and calls x the launch floor,
summed, as llm and whatif give it): what binds the work as counted. Beside it the work
floor (summed: `rooflab llm`'s TPOT floor of a decode step, TTFT floor of a prefill; the
time were the launches gone), which orders
devices of equal time, the ceiling that binds most of the time, and FLOP per joule at TDP
over the time it ranks by where the TDP is known. On an `rooflab llm --tp N` document
each device's TP link time is added to both times, and a row stands for all N GPUs.
A device that cannot run the work as counted (no math for its precision: fp64 on a TPU;
an `rooflab llm --json` model, or a `rooflab train --json` step's weights, gradients,
optimizer state and activations, larger than its memory) ranks after the others, marked.

  rooflab llm llama-3-8b --on H100 -o decode.json    (a model: count it first)
  rooflab choose decode.json --among H100,H200,MI300X
  rooflab choose kernels.json --kind gpu --json
  rooflab choose kernels.json --kind gpu -o ranking.csv    (every device)
  rooflab choose kernels.json --among me.json,h100    (a profile counts too)
"""


GPU_MEM_UTIL_HELP = ("share of each device's memory the model may use, as `rooflab llm "
                     "--gpu-mem-util` and vLLM's gpu_memory_utilization (0.9 there); of "
                     "the driver's total where the catalog has it (default: the llm "
                     "document's, else the whole memory)")


def candidates(among: str | None, kind: str | None):
    """(name, roof, TDP) for each device named in --among, or every catalog device of kind."""
    from ..hardware.catalog import all_devices, lookup
    from ..hardware.resolve import load_roof, looks_like_file, split_threads

    if among is not None:   # `--among ""` (an empty shell variable) was every device
        out = []
        for name in (n.strip() for n in among.split(",")):
            if not name:
                continue
            # 'me.json@1t' is a profile's one-thread roof; 'H100@1t' is refused (a catalog
            # entry is the whole chip), not read as 'H100'
            if split_threads(name) is not None or looks_like_file(name):
                roof = load_roof(name)
                out.append((roof.name, roof, None))
            else:   # a package that is several devices to software (MI250X): rank()
                dev = lookup(name)   # takes one die of its roof (model/dies.py)
                out.append((dev.name, dev.roof, dev.tdp_w))
        if not out:
            raise InputError("--among needs comma-separated device names, e.g. H100,H200")
        return _distinct(out)
    kinds = ("gpu", "cpu", "accelerator")
    kind = kind.lower() if kind is not None else None   # as `rooflab specs list --kind`
    if kind is not None and kind not in kinds:
        raise InputError(f"--kind must be one of {', '.join(kinds)}; got '{kind}'")
    return [(d.name, d.roof, d.tdp_w) for d in all_devices() if kind is None or d.kind == kind]


def _distinct(cands: list) -> list:
    """Each device once, the first kept: `--among h100,H100` ranked one H100 #1 and #2."""
    from .common import say

    names = [c[0] for c in cands]
    twice = [n for n in dict.fromkeys(names) if names.count(n) > 1]
    if twice:   # review r3 F13
        say("note", f"--among names {', '.join(twice)} more than once; ranked once")
    return [c for i, c in enumerate(cands) if c[0] not in names[:i]]


def register(app) -> None:
    """Add `rooflab choose`."""
    app.command("choose", help=HELP)(choose)


# what choose ranks without --among: every catalog device (or --kind's), the best 15 shown
AMONG_HELP = ("devices: H100,H200,MI300X or profile files (default: every catalog device, "
              "or --kind's)")
KIND_HELP = "every catalog device of this kind: gpu, cpu, accelerator (default: all kinds)"


def choose(
    files: Files,
    among: str = typer.Option(None, "--among", help=AMONG_HELP),
    kind: str = typer.Option(None, "--kind", help=KIND_HELP),
    top: int = typer.Option(15, "--top", help="show the N best (0: all)"),
    json_out: bool = typer.Option(False, "--json", help="print the ranking as JSON"),
    output: str = typer.Option(None, "--output", "-o", help="write the ranking: .json "
                               "(as --json) or .csv (one row per device)"),
    gpu_mem_util: float = typer.Option(None, "--gpu-mem-util", help=GPU_MEM_UTIL_HELP),
) -> None:
    from ..model.choose import choices_to_dict, compare_steps
    from ..model.schema import SCHEMA_VERSION
    from .choose_memory import fit_util
    from .choose_tokens import buyer_fields, step_scope
    from .choose_tp_links import tp_link_times  # review W4: the rank holds the link
    from .choose_train_comm import PLUS, add_comm_fields, print_comm_lines, rank_with_comm
    from .choose_train_own import own_needs, own_ranks
    from .choose_train_ranks import file_ranks
    from .common import emit_json

    top = _check_options(among, kind, top, output, files)
    docs: dict[str, object] = {}   # each .json input, parsed once (_doc)
    kernels, steps = load_work(files, docs)
    llms = {f: b for f in files if (b := _llm(docs, f)) is not None}
    util = fit_util(files, llms, gpu_mem_util)   # review s20 r5 F1: llm's memory rule
    cands = candidates(among, kind)
    need = _footprint(files, docs)
    _say_util_unused(gpu_mem_util, need)
    least = _least(files, docs)
    split = _parallel(files, docs)
    scope = step_scope(files, llms, kernels)   # review s20 r5 F3: what the time is of
    # each device's memory, looked up once, for rank (Choice.fits), the rows and the table
    memory = _memories([n for n, _, _ in cands], util[0]) if need else None
    links = tp_link_times(_tp_block(files, docs), [n for n, _, _ in cands], scope)
    # tp, pp: the energy is of every GPU a row stands for, at the time it ranks by
    ranks = file_ranks(files, docs)   # a train file's, its rows re-ringed per device
    # and under --zero/--tp each device's own rank where its ranks are not the file's
    own = own_ranks(files, docs, cands, ranks)
    kernels, comm, comms, choices = rank_with_comm(
        kernels, cands, links, ranks, own, needs_bytes=need, memory_bytes=memory,
        tp=split["tp"] if split else 1, pp=split["pp"] if split else 1)
    compared = compare_steps(steps, choices)
    data = choices_to_dict(choices, kernels, compared)
    _enrich_rows(data, choices, need, memory, least, split, files, docs, scope)
    own_needs(data, own)
    add_comm_fields(data, choices, comm, comms)
    buyer_fields(data, choices, scope, memory, util[0])
    doc = {"schema_version": SCHEMA_VERSION, "devices": data}
    if json_out:
        emit_json(doc)
    else:
        table = _table(choices[:top], kernels, compared, need, memory, least, split, scope,
                       util, train=train_inputs(files, docs), plus=PLUS if comm else None,
                       own=own)
        _say(table, split, _tp_block(files, docs), choices[:top], scope)
        print_comm_lines(comm, comms, choices[:top], ranks, frozenset(own))
    if output:   # the file holds every device, as --json does; --top trims the screen only
        _write(output, doc)


def _say(table, split, tp_block, shown, scope) -> None:
    """The text output above the communication lines: the GPUs line of a split run, the
    table, the tensor-parallel lines."""
    from .common import console

    if split is not None and split["gpus"] > 1:
        from .choose_words import gpus_line

        print(gpus_line(split))
    console().print(table)
    _tp_lines(split, tp_block, shown, scope)


def _write(output: str, doc: dict) -> None:
    """-o: the ranking to .json or .csv, said on stderr as every verb does (stdout holds
    the data, s22 r3 F7)."""
    from .choose_output import write_ranking
    from .common import wrote

    write_ranking(output, doc)
    wrote(output)


def _say_util_unused(gpu_mem_util: float | None, need: float | None) -> None:
    """--gpu-mem-util with no model footprint to fit: said, not silently unused (review s20
    x2 F3)."""
    if gpu_mem_util is None or need is not None:
        return
    from .common import say

    say("note", f"--gpu-mem-util {gpu_mem_util:g} is ignored: it holds the fit of an "
                f"`rooflab llm --json` document's model to that share of each device's "
                f"memory, and no input here is one (no model footprint to fit)")


def _tp_lines(split: dict | None, block, shown, scope) -> None:
    """Under an `llm --tp` document, each link's term below the table (review r3 F6)."""
    if split is None or split["tp"] <= 1:
        return
    from .choose_tp_links import tp_link_lines
    from .choose_words import llm_floor

    print("\n".join(tp_link_lines(block, shown, llm_floor(scope) or "work floor + link",
                                  scope)))


def _check_options(among: str | None, kind: str | None, top: int, output: str | None,
                   files: list[str]) -> int:
    """--among/--kind/--top/-o checked before any work; returns --top (0: all)."""
    from .common import refuse_input_as_output

    if among is not None and kind:
        raise InputError("give one of --among (named devices) and --kind (every "
                         "catalog device of a kind), not both")
    if top < 0:
        raise InputError(f"--top must be >= 0 (0: all); got {top}")
    top = top or 1_000_000   # 0 means all, as in `rooflab ncu --top 0`
    if output and Path(output).suffix.lower() not in (".json", ".csv"):
        raise InputError(f"-o {output}: use .json (the ranking as --json prints it) or "
                         f".csv (one row per device)")
    refuse_input_as_output(output, [*files, *(among or "").split(",")])
    if output:   # before any work: a failed -o printed the whole ranking, then exit 2
        from ..files import check_writable

        check_writable(output)
    return top


def _enrich_rows(data: list[dict], choices, need: float | None, memory: dict | None,
                 least: float | None, split: dict | None, files: list[str],
                 docs: dict[str, object], scope=None) -> None:
    """Add to choices_to_dict's rows (same order as choices) an llm document's memory
    figures (need, each device's memory, fits, least) and its TP/PP split with each
    device's TP link time."""
    if need is not None:
        for c, d in zip(choices, data, strict=True):   # choices_to_dict: same order
            d["memory_bytes"], d["needs_bytes"] = memory[c.name], need
            d["fits"] = c.fits
            if least is not None:   # int4 weights + fp8 KV: the least dtypes can do
                d["least_bytes"] = least
    if split is not None:   # how many GPUs each row's time and memory assume
        from .choose_tp_links import tp_link_fields

        for c, d in zip(choices, data, strict=True):
            d.update(split)
            if split["tp"] > 1:   # review r3 F6: each device's own link time
                d.update(tp_link_fields(_tp_block(files, docs), c, scope))


def _memories(names: list[str], util: float | None) -> dict[str, float | None]:
    """Each candidate's memory for the fit, by `rooflab llm`'s rule (choose_memory), one
    die's where the package is several devices to software (choose_dies)."""
    from .choose_dies import die_count
    from .choose_memory import device_memory

    return {n: device_memory(n, util, die_count(n))[0] for n in names}


def _table(choices, kernels, compared=(), need=None, memory=None, least=None, split=None,
           scope=None, util=(None, ""), train=False, plus=None, own=None):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ..model.choose import WITH_LAUNCHES, best_times, flop_per_joule, standings
    from ..model.dies import DIE
    from ..units import fmt_seconds, fmt_times, si, si_apart
    from .choose_dies import die_count, die_notes, platform_max
    from .choose_energy import energy_words
    from .choose_tokens import scope_line, token_cells
    from .choose_words import floor_words, per_unit, title

    link = any(c.link_s is not None for c in choices)   # a --tp shard: + each TP link
    # what the times add: a --tp shard's TP link, a train --dp step's exposed comm
    plus = (plus or " + TP link") if link else ""
    mixed = any(c.viable for c in choices) and not all(c.viable for c in choices)
    t = Table(title=title(scope, plus, mixed), title_justify="left")
    tokens = (("tok/s", f"tok/s per {per_unit(choices)}", "J/token (est.)") if scope is not None
              else ())
    for h in ("#", "device", WITH_LAUNCHES + plus, "vs best", "work floor" + plus, "vs best",
              "binding (share)", "TDP", "FLOP/J", *tokens):
        # fold, never "…": a narrow terminal keeps every digit (s22 r3 F6)
        t.add_column(h, justify="left" if h in ("device", "binding (share)") else "right",
                     overflow="fold")
    floor, best = best_times(choices)   # of all the devices, as --json's relative columns
    places = standings(choices)
    tied = len(set(places)) < len(places)   # the footnote says one # only where it shows
    for i, c in zip(places, choices, strict=True):   # equal times, one place
        fj = flop_per_joule(c, kernels)
        # a device that cannot run the work has no ratio to the best that can (review s20
        # r5 F4: a 'does not fit' B200 read 0.71x under a 1.00x MI300X)
        vs = mixed and not c.viable
        # one die's roof, as report names it (model.dies.DIE: "AMD Instinct MI250X, one die")
        t.add_row(str(i), c.name + (DIE if die_count(c.name) > 1 else "") + _unfit_mark(c),
                  fmt_seconds(c.ranked_s),
                  fmt_times(c.ranked_s / best) if best and not vs else "-",
                  fmt_seconds(c.floor_s),
                  fmt_times(c.floor_s / floor) if floor and not vs else "-",
                  f"{c.binding} ({fmt_fraction(c.binding_share)})",
                  "-" if c.tdp_w is None else f"{c.tdp_w:.0f} W", si(fj, "FLOP/J"),
                  *token_cells(c, scope))
    words = floor_words(split, scope)
    words = f" ({words})" if words else ""
    parts: list = [t, Text(f"work floor: max(FLOP / P, bytes / B) per kernel, summed"
                           f"{words}; {WITH_LAUNCHES}: each kernel at "
                           f"least max(work floor, calls x the device's launch floor), "
                           f"summed (as llm and whatif give it): the rank, ties broken by "
                           f"the work floor (the time if the launches were gone: CUDA "
                           f"graphs)"
                           f"{', equal in both: one # (10, 10, 12)' if tied else ''}; "
                           f"vs best: each time / the best device's"
                           f"{', - where it cannot run the work' if mixed else ''}; binding: "
                           f"the share of the time {WITH_LAUNCHES}; "
                           f"{energy_words(split, link, plus)}", style="dim")]
    if scope is not None:
        parts.append(Text(scope_line(scope, split["gpus"] if split else 1, plus), style="dim"))
    for s in compared:
        on = f" on {s.device}" if s.device else ""
        vs = (f" = {fmt_times(s.vs_floor)} its predicted {fmt_seconds(s.floor_s)} "
              f"{WITH_LAUNCHES}" if s.vs_floor else "")
        parts.append(Text(f"measured: {s.step.name} took {fmt_seconds(s.step.seconds)}{on}"
                          f"{vs} (a comparison point, not work: the step's kernels are "
                          f"counted once, from their own rows)"))
    # one line per distinct fallback, naming the devices it applies to
    devices = _devices_by(choices, lambda c: c.notes)
    if need is not None:   # memory: each device's, as rank() judged Choice.fits by it
        from .choose_memory import memory_rule_line

        if any(c.fits is not None for c in choices):   # review s20 x2 F5: no rule for none
            parts.append(Text(memory_rule_line(*util)))
        short = [(c.name, memory[c.name]) for c in choices if c.fits is False]
        # as many digits as tell the need from the largest memory it exceeds
        needs = si_apart(need, max((m for _, m in short), default=0.0), "B")[0]
        remedy = (TRAIN_REMEDY if train else
                  fit_remedy([name for name, _ in short],
                             hopeless=[n for n, m in short if least is not None and least > m]))
        short = [f"{name} ({si_apart(need, m, 'B')[1]})" if name not in (own or {}) else
                 f"{name} ({si(m, 'B')}; its own rank needs {si(own[name].need_bytes, 'B')}"
                 f")" for name, m in short]   # a train file's rank recomputed (s35 E)
        rank_note = (", and they rank after the devices it fits in"
                     if any(c.fits is not False for c in choices)
                     else ": it fits none of them, so the ranking is by time alone")
        if short:
            what = ("the training step needs {} per device (weights + gradients + optimizer "
                    "state + activations, from the train document)" if train else
                    "the model needs {} per device (weights + KV + activations, from the llm "
                    "document)").format(needs)
            parts.append(Text(f"does not fit: {what} > the "
                              f"memory of {', '.join(short)}; their times assume it fit"
                              f"{rank_note} ({remedy})"))
        cpus = platform_max(c.name for c in choices if c.fits is None)
        if cpus:
            parts.append(Text(f"fit not judged: the catalog's memory of {', '.join(cpus)} "
                              f"is the most the platform takes, not the RAM a server has "
                              f"installed, so the model's {si(need, 'B')} is held against "
                              f"none of it (ranked by time, as devices it may fit in)"))
    lacking = _devices_by(choices, lambda c: c.missing)
    for p, names in lacking.items():
        one = len(names) == 1
        parts.append(Text(f"no {p} ceiling: {', '.join(names)} list{'s' if one else ''} no "
                          f"{p} peak, so {'its' if one else 'their'} time holds the {p} work "
                          f"to another precision's math (the note below); ranked after the "
                          f"devices that list one"))
    unfloored = no_launch_floor(choices, kernels)
    if unfloored:
        parts.append(Text(unfloored))
    parts += [Text(f"note: {n}") for n in die_notes(c.name for c in choices)]
    from ..model.tf32_note import tf32_devices_note

    tf32 = tf32_devices_note(kernels, [c.roof for c in choices])   # review s28 R3 F7
    if tf32 is not None:
        parts.append(Text(f"note: {tf32}"))
    for n, names in devices.items():
        parts.append(Text(f"note: {n}, on {', '.join(names)}", style="dim"))
    return Group(*parts)


def no_launch_floor(choices, kernels) -> str:
    """The line for candidates whose roof gives no launch (dispatch) floor, a catalog
    CPU's: their time with launches is their work floor alone, while each GPU is charged
    calls x its floor, so the 'vs best' with launches flatters them (review r8 F7); ''
    where every candidate has one or the kernels launch nothing."""
    from ..model.choose import WITH_LAUNCHES

    names = [c.name for c in choices if c.roof.overhead_s is None]
    calls = sum(k.calls for k in kernels)
    if not names or len(names) == len(choices) or not calls:
        return ""
    one = len(names) == 1
    return (f"no launch floor: {', '.join(names)} give{'s' if one else ''} none (the "
            f"catalog has no dispatch cost for {'it' if one else 'them'}), so "
            f"{'its' if one else 'their'} time {WITH_LAUNCHES} is the work floor "
            f"alone, not charged the {calls} launches the others are; a probed profile "
            f"(`rooflab probe`) measures one")


def _devices_by(choices, items) -> dict[str, list[str]]:
    """Each item (a note, a missing precision) with the devices it applies to, in order."""
    out: dict[str, list[str]] = {}
    for c in choices:
        for item in items(c):
            out.setdefault(item, []).append(c.name)
    return out


# what `rooflab train` itself offers for a step that does not fit (its memory line)
TRAIN_REMEDY = ("rooflab train --recompute full, a smaller --batch with --accumulate, or "
                "ZeRO-3 / FSDP over several devices")


def _unfit_mark(c) -> str:
    """Why a device ranks after the others (model.choose.Choice.viable), in its row."""
    why = [f"no {p}" for p in c.missing] + (["does not fit"] if c.fits is False else [])
    return f" ({', '.join(why)})" if why else ""
