"""`rooflab ai stencil|spmv|dot|axpy`: the HPC kernels (review 16a D), split out of
cli/ai.py, which registers them. Their dtype defaults to fp64, HPC's precision.
"""

from __future__ import annotations

import math
from dataclasses import replace

import typer

from ..errors import InputError
from ..units import fmt_bytes_binary as _binary
from ..units import fmt_fraction  # cache sizes as datasheets give them
from .ai_args import DTYPE64, HPC_DTYPE, JSON, SIZES, OnAi, _n
from .finite_options import as_typed


def _hpc():
    # imported on first use, as ai_args._ops does: `rooflab ai --help` stays light
    from ..workloads import ops_hpc

    return ops_hpc


def _emit(op, on, json_out, extra=None, assumed=None, roof_extra=None) -> None:
    from .ai import _emit as emit  # at call time: ai imports this module

    emit(op, on, json_out, extra, assumed, roof_extra=roof_extra)


WRITE_ALLOCATE = typer.Option(False, "--write-allocate", help="add the read of each "
                              "written line a normal store causes (real traffic, what "
                              "hardware counters see; judged against a probed roof's DRAM "
                              "(real traffic) ceiling)")


def _machine(op, on: str, roof):
    """The machine --on names (its cache sizes), as the report finds it for op's kernel on
    `roof` (the roof _emit resolved from --on)."""
    from ..model.analysis import analyze
    from ..report.markdown import machine_for
    from .inputs_roofs import _profile_of

    return machine_for(analyze(roof, [op.kernel()]), _profile_of(on))


def _layer_condition(op, on: str | None, roof) -> dict:
    """The stencil's layer condition: the bytes of its 2r + 1 neighbouring planes and, when
    the roof's machine gives cache sizes, whether they fit each level."""
    out = {"bytes": op.shape["layer_condition_bytes"], "fits": {}}
    if roof is None:
        return out
    machine = _machine(op, on, roof)
    out["fits"] = {lv: out["bytes"] <= size for lv, size in sorted(machine.caches.items())}
    out["cache_bytes"] = dict(sorted(machine.caches.items()))
    return out


def _add_layer_condition(d: dict, op, on: str | None, roof) -> None:
    """layer_condition in the answer, and with --on a note saying where the planes fit."""
    from ..units import si

    lc = d["layer_condition"] = _layer_condition(op, on, roof)
    if roof is None:
        return
    planes = (f"the layer condition's {2 * op.shape['radius'] + 1} planes "
              f"({si(lc['bytes'], 'B')} = {_binary(lc['bytes'])})")
    if not lc["fits"]:
        d["notes"].append(f"{planes} must stay in cache; {roof.name} gives no cache sizes: "
                          f"compare them with its L2/L3")
        return
    where = ", ".join(f"{'fit' if ok else 'do not fit'} {lv} ({_binary(lc['cache_bytes'][lv])})"
                      for lv, ok in lc["fits"].items())
    reads = 2 * op.shape["radius"] + 1
    d["notes"].append(f"{planes} {where}; where they fit in no cache, each point comes from "
                      f"DRAM up to {reads} times a sweep, not once: block the grid until "
                      f"they fit (threads on their own blocks each need theirs in a shared "
                      f"cache)")


def _cache_holds(op, on: str | None):
    """`roof_extra` for _emit (review s18 r2 F3): with --on, a note naming the smallest cache
    that holds the operands (one call's bytes, the write-allocate read left out: a working
    set, not traffic), as the stencil's layer-condition note names where its planes fit.
    A dot of 1000 fp64 (16 kB) fits L1: called again on the same data it runs from L1,
    and the DRAM floor binds only its first call."""
    def extra(d: dict, roof) -> dict:
        if roof is None:
            return {}
        from ..model.sanity_counts import LLC_RESIDENT_SHARE, smallest_cache_holding
        from ..units import fmt_seconds, si

        machine = _machine(op, on, roof)
        ws = op.bytes - float((op.bytes_split or {}).get("write_allocate", 0.0))
        held = smallest_cache_holding(machine, ws)
        if held is None:
            return {}
        level, size = held
        own = roof.find_memory(level)
        floor = (f"; from {level} ({si(own.value, 'B/s')}) its floor is "
                 f"{fmt_seconds(op.bytes / own.value)}" if own is not None else "")
        return {"notes": list(d.get("notes", [])) + [
            f"the operands ({si(ws, 'B')}) fit in {level} ({_binary(size)}; a working set "
            f"up to {fmt_fraction(LLC_RESIDENT_SHARE)} of a cache stays there between calls): "
            f"called again on the same data (a solver's loop, a timing loop) they are served from "
            f"{level}, so the DRAM time floor above binds only a first call{floor}"]}
    return extra


def _register_stencil(ai: typer.Typer) -> None:
    """`rooflab ai stencil`."""

    @ai.command("stencil", **SIZES)
    def stencil(grid: str = typer.Argument(..., help="grid sizes, outermost first: "
                                           "256x256x256, 4096x4096 or 1e6"),
                points: str = typer.Option(..., "--points", help="points of the stencil "
                                           "(7: the 3-D star of radius 1)"),
                dtype: str | None = DTYPE64,
                sweeps: str = typer.Option("1", "--sweeps", help="sweeps over the grid "
                                           "(time steps or iterations)"),
                write_allocate: bool = WRITE_ALLOCATE,
                flop_per_point: float | None = typer.Option(
                    None, "--flop-per-point", help="FLOP per updated point (default: "
                    "points - 1 adds + 2 muls, 8 for 7 points)"),
                box: bool = typer.Option(False, "--box", help="a box stencil, (2r+1)^dims "
                                         "points (27 in 3-D), not a star"),
                on: OnAi = None, json_out: bool = JSON) -> None:
        """A symmetric stencil sweep (Jacobi: reads u, writes a second array).

            rooflab ai stencil 256x256x256 --points 7 --dtype fp64 --sweeps 20
            rooflab ai stencil 256x256x256 --points 7 --dtype fp64 --write-allocate
            rooflab ai stencil 4096x4096 --points 9 --box --dtype fp32 --on me.json

        Updated points: the interior, (N - 2r) per dimension, times --sweeps. FLOP per
        point: points - 1 adds + 2 muls (u' = a·centre + b·Σ neighbours; 7 points: 8), or
        --flop-per-point. DRAM bytes: one read and one write per point (16 B in fp64),
        + 8 B with --write-allocate (24 B), assuming the layer condition: the 2r + 1
        neighbouring planes stay in cache (with --on, the text says where they fit).
        With --write-allocate the bytes are real traffic: the JSON kernel's meta says so
        (byte_count), and a probed CPU roof judges them against its DRAM (real traffic)
        ceiling, as it does perf's counts of the same loop. Default dtype fp64 (HPC's
        precision; the ML ops default to fp16).
        """
        if flop_per_point is not None and not (math.isfinite(flop_per_point)
                                               and flop_per_point >= 0):
            raise InputError(f"--flop-per-point must be a finite number >= 0 (8 for a "
                             f"7-point Jacobi); got {as_typed('--flop-per-point', flop_per_point)}")
        # 3: the fewest points of a symmetric stencil (1-D, radius 1)
        _emit(_hpc().stencil(_grid_arg(grid), _n(points, "--points", minimum=3),
                             dtype or HPC_DTYPE,
                             sweeps=_n(sweeps, "--sweeps", minimum=1),
                             write_allocate=write_allocate,
                             flop_per_point=flop_per_point, box=box), on, json_out,
              assumed=dtype is None)


def _grid_arg(text: str) -> tuple[int, ...]:
    """GRID as typed: sizes joined by x (256x256x256, 1e3x1e3)."""
    parts = str(text).lower().replace("×", "x").split("x")
    if not 1 <= len(parts) <= 3:
        raise InputError(f"GRID must be 1 to 3 sizes joined by x, outermost first, such as "
                         f"256x256x256 or 4096x4096; got '{text}'")
    return tuple(_n(p.strip(), "each GRID size") for p in parts)


def _register_spmv(ai: typer.Typer) -> None:
    """`rooflab ai spmv`."""

    @ai.command("spmv", **SIZES)
    def spmv(rows: str = typer.Argument(..., help="rows of the square matrix (= length "
                                        "of x and y)"),
             nnz: str = typer.Argument(..., help="nonzeros of the matrix"),
             dtype: str | None = DTYPE64,
             index_bytes: str = typer.Option("4", "--index-bytes", help="bytes per "
                                             "column index and row pointer (4: int32, 8: "
                                             "int64)"),
             rhs: str = typer.Option("1", "--rhs", help="right-hand sides per matrix read "
                                     "(SpMM, block Krylov)"),
             x_reuse: str = typer.Option("perfect", "--x-reuse", help="perfect: x read "
                                         "once (it stays in cache); none: one x element "
                                         "per nonzero"),
             on: OnAi = None, json_out: bool = JSON) -> None:
        """y = A·x, A in CSR (compressed sparse row).

            rooflab ai spmv 2e6 54e6 --dtype fp64
            rooflab ai spmv 2e6 54e6 --dtype fp64 --rhs 8
            rooflab ai spmv 2e6 54e6 --dtype fp64 --x-reuse none --on me.json

        FLOP 2·nnz·rhs. Bytes: values nnz·s + column indices nnz·i + row pointers
        (rows + 1)·i, read once for all --rhs vectors; per vector x (rows·s, or nnz·s
        with --x-reuse none) and y written (rows·s). The JSON kernel's meta carries
        read_only_bytes (the matrix) and index_bytes, so the advice treats the matrix as
        read-only. Almost nothing is stored (y), so the count is real traffic: a probed CPU
        roof judges it against its DRAM (real traffic) ceiling. Default dtype fp64 (HPC's
        precision; the ML ops default to fp16).
        """
        reuse = x_reuse.strip().lower()
        if reuse not in _hpc().SPMV_X_REUSE:
            raise InputError(f"--x-reuse must be perfect (x stays in cache) or none (one x "
                             f"element per nonzero); got '{x_reuse}'")
        from ..model.byte_convention import roof_write_allocates

        # y's write-allocate read is a CPU's: a GPU roof (--on) counts none
        roof = None
        if on:
            import warnings

            from .inputs import resolve_on

            with warnings.catch_warnings():   # _emit resolves --on again and says its notes
                warnings.simplefilter("ignore")
                roof = resolve_on(on)[0]
        op = _hpc().spmv(_n(rows, "rows"), _n(nnz, "nnz"), dtype or HPC_DTYPE,
                         index_bytes=_n(index_bytes, "--index-bytes", minimum=1),
                         rhs=_n(rhs, "--rhs", minimum=1), x_reuse=reuse,
                         write_allocate=roof_write_allocates(roof))
        if roof is None:
            op = replace(op, byte_model=f"{op.byte_model} (a CPU's write-allocate read "
                                        f"assumed; --on a GPU leaves it out)")
        else:
            from ..model.machine import ASSUMED_CPU, kind_unknown

            if kind_unknown(roof):   # the write-allocate read rests on that assumption
                op = replace(op, byte_model=f"{op.byte_model}; {ASSUMED_CPU}")
        _emit(op, on, json_out, roof_extra=_cache_holds(op, on), assumed=dtype is None)


def _register_dot(ai: typer.Typer) -> None:
    """`rooflab ai dot`."""

    @ai.command("dot", **SIZES)
    def dot(n: str, dtype: str | None = DTYPE64, on: OnAi = None, json_out: bool = JSON) -> None:
        """s = x·y over n elements (BLAS dot).

            rooflab ai dot 1e8 --dtype fp64

        FLOP 2n (one FMA per element); bytes: x and y read once, 2n·s (16 B per element
        in fp64, AI 1/8); no stores, so write-allocate does not arise and the count is
        real traffic (a probed CPU roof's DRAM (real traffic) ceiling judges it). Default
        dtype fp64 (HPC's precision; the ML ops default to fp16).
        """
        op = _hpc().dot(_n(n, "n"), dtype or HPC_DTYPE)
        _emit(op, on, json_out, roof_extra=_cache_holds(op, on), assumed=dtype is None)


def _register_axpy(ai: typer.Typer) -> None:
    """`rooflab ai axpy`."""

    @ai.command("axpy", **SIZES)
    def axpy(n: str, dtype: str | None = DTYPE64, write_allocate: bool = WRITE_ALLOCATE,
             out_of_place: bool = typer.Option(False, "--out-of-place", help="z = a·x + y "
                                               "into a third array (STREAM's triad)"),
             on: OnAi = None, json_out: bool = JSON) -> None:
        """y = a·x + y over n elements (BLAS axpy).

            rooflab ai axpy 1e8 --dtype fp64
            rooflab ai axpy 1e8 --dtype fp64 --out-of-place --write-allocate

        FLOP 2n; bytes 3n·s (x and y read, y written: 24 B per element in fp64, AI
        1/12). In place the store hits the line just read for y, so --write-allocate adds
        nothing and the count is real traffic; with --out-of-place it adds the read of z:
        4n·s (32 B). Real-traffic counts are judged against a probed CPU roof's DRAM (real
        traffic) ceiling (meta byte_count). Default dtype fp64 (HPC's precision; the ML
        ops default to fp16).
        """
        op = _hpc().axpy(_n(n, "n"), dtype or HPC_DTYPE, write_allocate=write_allocate,
                         out_of_place=out_of_place)
        _emit(op, on, json_out, roof_extra=_cache_holds(op, on), assumed=dtype is None)
