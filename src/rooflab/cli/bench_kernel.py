"""`rooflab bench --kernel NAME` (one numba kernel at one working set on N threads, as
likwid-bench -t runs it) and `--list --details` (likwid-bench -l)."""

from __future__ import annotations

import typer

from ..errors import InputError
from .bench_output import emit_document
from .common import say_line


def check_kernel_options(kernel: str | None, one: dict, zoo: dict, args) -> None:
    """--size, --threads, --cpus belong to --kernel; the zoo's options do not mix with it."""
    given = [k for k, v in one.items() if v is not None]
    if kernel is None:
        verb = "is an option" if len(given) == 1 else "are options"
        raise InputError(f"{' and '.join(given)} {verb} of --kernel (one kernel at one "
                         f"size); add --kernel NAME, e.g. rooflab bench --kernel stream "
                         f"--size 1MiB")
    if "--details" in given:
        raise InputError("--details goes with --list (rooflab bench --list --details), not "
                         "with --kernel")
    clash = [k for k, v in zoo.items() if v is not None]
    if clash:
        named = " and ".join(clash)
        raise InputError(f"--kernel {kernel} runs one numba kernel on this CPU; {named} "
                         f"{'belongs' if len(clash) == 1 else 'belong'} to the reference "
                         f"kernels (the zoo) or to --run: drop {named}")
    if args:
        raise InputError(f"unexpected arguments {' '.join(args)} (see `rooflab bench "
                         f"--help`)")


def bench_kernel(name: str, *, size: str | None, threads: int, cpus: str | None,
                 on: str | None, quick: bool, json_out: bool,
                 samples: int | None = None) -> None:
    """`rooflab bench --kernel NAME`: one numba kernel at one working set on N threads, with
    --on its share of that level's ceiling (likwid-bench -t NAME -w S0:SIZE:N)."""
    from ..bench import kernel_runner as kr
    from ..bench.zoo import llc_bytes
    from ..hardware.host import detect_caches
    from ..probe.cpu import affinity as aff

    k = kr.kernel(name)
    if size is not None and k.name == "peakflops":
        raise InputError("--size does not apply to --kernel peakflops: its FMA chains stay "
                         "in registers (one block per thread); drop --size")
    llc = llc_bytes()
    ws = kr.parse_size(size, llc) if size is not None else kr.default_size(llc)
    cpu_list = None
    if cpus is not None:
        cpu_list = aff.parse_cpu_list(cpus)
        aff.check_cpus(cpu_list, aff.allowed_cpus())
    allowed = cpu_list or aff.allowed_cpus()
    import os

    kr.check_threads(threads, len(allowed) if allowed else (os.cpu_count() or 1))
    roofs, threads_row = None, ""
    if on is not None:   # a bad --on fails before the run
        from ..hardware.thread_rows import RUN, roofs_for_kernel_threads
        from .inputs import resolve_on

        # a scaling profile's row for --threads judges, as a kernel file's 'threads'
        # picks it: a one-thread run judged by the all-thread L1 read 171 % (review 16a G)
        roofs = resolve_on(on)
        picked, threads_row, _ = roofs_for_kernel_threads(on, threads, RUN)
        roofs = picked or roofs
    simd = kr.simd_note(name)
    if simd and not json_out:
        say_line(f"note: {simd}")
    from ..errors import require

    require("numba", "cpu", "rooflab bench --kernel")
    if cpu_list is not None:
        aff.pin(cpu_list)
    from ..measuring import resolve_plan
    from ..probe.cpu.bandwidth import capacities

    caps = capacities(detect_caches(), threads)
    # the zoo's plans (at least compare's 9 samples), so --kernel and the zoo agree
    plan = resolve_plan("quick" if quick else None).with_min_samples(samples)
    record = None
    if roofs:   # judged by a given roof: the probe's load check over the run (s21 r7 F8)
        from .bench_roofs import say_timing_load, timed_with_load

        result, record = timed_with_load(lambda: kr.run_kernel(k, ws, threads, caps, plan),
                                         threads)
        say_timing_load(record)   # no notes section in its text: stderr, both ways
    else:
        result = kr.run_kernel(k, ws, threads, caps, plan)
    placed = kr.place_on(result, roofs[0], threads_row) if roofs else None
    if json_out:
        doc = kr.result_dict(result, placed)
        emit_document(doc | ({"machine_load": record} if record else {}))
        return
    if roofs and placed is None:
        say_line(f"note: {roofs[0].name} has no {result.level} ceiling to place it on")
    typer.echo("\n".join(kr.summary_lines(result, placed)))


def list_details(json_out: bool) -> None:
    """--list --details: likwid-bench -l for every --kernel."""
    from ..bench.kernel_runner import BYTE_MODEL, details_rows

    rows = details_rows()
    if json_out:
        emit_document({"byte_model": BYTE_MODEL, "kernels": rows})
        return
    from .common import console

    out = console()
    out.print(details_table(rows))
    notes = [f"  {r['kernel']}: {r['note']}" for r in rows if r["note"]]
    typer.echo("\n".join(["notes:"] + notes) if notes else "")
    typer.echo(f"per update (one element of each stream); bytes: {BYTE_MODEL}; "
               f"numba emits no non-temporal stores (no copy_mem/store_mem)")


DETAILS_HEADERS = ("kernel", "formula", "streams", "loads", "stores", "FLOP", "bytes",
                   "likwid-bench")


def details_table(rows: list[dict]):
    """--list --details as a table: one column per figure, numbers right-aligned under
    their header (the old lines put 'FLOP 4096' and 'bytes 8' at a different column in
    each row, review s33 I); a kernel's note goes below the table, not between rows."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1, 0, 0),
                  pad_edge=False, header_style="bold")
    for i, h in enumerate(DETAILS_HEADERS):
        # the kernel name and the figures are never cut; the formula and likwid's words
        # wrap within their columns on a narrow terminal
        numeric = 2 <= i < len(DETAILS_HEADERS) - 1
        text = i in (1, len(DETAILS_HEADERS) - 1)
        table.add_column(h, justify="right" if numeric else "left", no_wrap=not text,
                         overflow="fold", min_width=14 if text else None)
    for r in rows:   # literal text: 'a[i] = b[i]' is no markup
        likwid = r["likwid"].removeprefix(f"{r['kernel']}: ")
        table.add_row(*(escape(str(c)) for c in (
            r["kernel"], r["formula"], r["streams"], r["loads"], r["stores"],
            r["flop_per_update"], r["bytes_per_update"], likwid)))
    return table
