"""The kernel meta the advice reads, as flat columns of the profiler verbs' -o x.csv
(cli/profiled.csv_table), so that `rooflab report x.csv` advises as `rooflab report` on the
profile itself (and keeps each kernel's step, the file it came from, for its time share):
the no-FMA ceiling (meta fma_share, model/fma_ceiling.py), the occupancy
and grid figures (advice_compute.occupancy_words, grid_words, latency_detail: meta
occupancy_*, grid, block, sms, pipe_busy) and the profiler that timed the kernel (meta
source: a GPU-side time, model/gpu_time.py). Before, the CSV held none of them: NERSC
GPP's `ncu output1.ncu-rep -o k.csv; report k.csv` lost "FMA share 46 %: tops out at
73 %" and read its 4-block reduction memory-bound, not latency-bound (review s21).
ingest/kernelfile_csv.py reads each column back into the meta it came from. Not a torch
trace's meta op: read back, a kernel file's op gives a "softmax" without a unit the vector
unit (kernelfile_rows._with_op_unit), a ceiling the torch verb did not judge it by.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..ingest.kernelfile_csv import GRID_COLUMNS, PIPE_COLUMN
from ..model.fma_ceiling import FLAT_KEY
from ..model.kernel import Kernel

# The meta written as it is (a number or a string), in this order, each only where some
# kernel has it. step and step_index: which file of `ncu a.csv b.csv` the kernel came from,
# so that read back each keeps its share of its own run, as the JSON does (review s23 r2
# F3: read back, the two runs were pooled, 100 % / 100 % became 54 % / 46 %). device: the
# name the profiler recorded, so that read back another GPU's roof is still seen as such
# and not scaled to this GPU's clock (review s26 v2 F6: 23 % on L4's roof, not 18 %).
# occupancy_rocprof: rocprofv3's own OccupancyPercent (measured), kept beside rooflab's
# occupancy_achieved, which occupancy_from names; without the column the CSV lost it (s37 H).
PLAIN = ("step", "step_index", "source", "grid", "block", "sms", "sms_source",
         "occupancy_theoretical", "occupancy_achieved", "occupancy_rocprof", "occupancy_limiter",
         "occupancy_limit_blocks", "workgroup_size", "wave_size", "occupancy_from",
         "sm_clock_hz", "cc", "device")


def _cell(key: str, value: object) -> object:
    """A meta value as its CSV cell: a grid or block '(65535, 1, 1)' as '65535x1x1' (no
    commas to quote: the row splits by hand), None for what a cell cannot hold."""
    if key in GRID_COLUMNS and isinstance(value, str):
        dims = [d.strip() for d in value.strip().strip("()").split(",") if d.strip()]
        return "x".join(dims) if dims and all(d.isdigit() for d in dims) else value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    return value


def flat_meta(meta: Mapping) -> dict[str, object]:
    """{column: cell} of the meta the advice reads: PLAIN as they are, meta fma_share
    {precision: share} as fma_share_<precision>, pipe_busy {pipe: %} as pipe_busy_<pipe>."""
    out = {}
    for key in PLAIN:
        cell = _cell(key, meta.get(key))
        if key == "device" and str(cell).isdigit():
            continue   # a raw page's device index ('0'), not the name device_mismatch reads
        if cell not in (None, ""):
            out[key] = cell
    for flat, nested in ((FLAT_KEY, "fma_share"), (PIPE_COLUMN, "pipe_busy")):
        parts = meta.get(nested)
        if isinstance(parts, Mapping):
            out.update({flat + str(k): v for k, v in parts.items()
                        if isinstance(v, (int, float)) and not isinstance(v, bool)})
    return out


def meta_columns(kernels: Sequence[Kernel]) -> tuple[dict[int, dict[str, object]],
                                                     tuple[str, ...]]:
    """({id(kernel): its flat_meta}, the columns some kernel has: PLAIN's order, then
    the fma_share_ and pipe_busy_ columns in the order first met)."""
    flats = {id(k): flat_meta(k.meta) for k in kernels}
    seen = dict.fromkeys(c for f in flats.values() for c in f)
    columns = tuple(c for c in PLAIN if c in seen) + tuple(c for c in seen if c not in PLAIN)
    return flats, columns
