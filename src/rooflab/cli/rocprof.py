"""rooflab rocprof — AMD rocprof / rocprof-compute counter CSV on the roof."""

from __future__ import annotations

from .options import profiler_verb

HELP = """Put AMD GPU kernels profiled with rocprof on the roofline.

Collect the counters rocprof-compute's roofline uses, e.g. with rocprof v1:

  pmc: SQ_INSTS_VALU_ADD_F32 SQ_INSTS_VALU_MUL_F32
  pmc: SQ_INSTS_VALU_FMA_F32 SQ_INSTS_VALU_TRANS_F32
  pmc: SQ_INSTS_VALU_MFMA_MOPS_F16 SQ_INSTS_VALU_MFMA_MOPS_BF16
  pmc: TCP_TOTAL_CACHE_ACCESSES_sum TCC_REQ_sum
  pmc: TCC_EA_RDREQ_sum TCC_EA_RDREQ_32B_sum
  pmc: TCC_EA_WRREQ_sum TCC_EA_WRREQ_64B_sum
  pmc: TCP_TCC_READ_REQ_sum TCP_TCC_WRITE_REQ_sum
  pmc: TCP_TCC_ATOMIC_WITH_RET_REQ_sum TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum
  (MI300: TCC_EA0_ for TCC_EA_, e.g. TCC_EA0_RDREQ_sum TCC_EA0_RDREQ_32B_sum
   TCC_EA0_WRREQ_sum TCC_EA0_WRREQ_64B_sum, plus TCC_BUBBLE_sum and
   SQ_INSTS_VALU_MFMA_MOPS_F8; MI350/MI355X: TCC_EA0_RDREQ_64B_sum and
   TCC_EA0_RDREQ_128B_sum, not TCC_BUBBLE_sum)
  Achieved occupancy: SQ_ACCUM_PREV_HIRES (SQ_LEVEL_WAVES accumulated, as
  rocprof-compute collects it) with GRBM_GUI_ACTIVE, and --on the GPU;
  rocprofv3's own OccupancyPercent is read too, and said beside it.

  rocprof -i counters.txt ./app      (writes results.csv)
  rooflab rocprof results.csv --on mi300x
  rooflab rocprof workloads/app/MI300X_A1 --on mi300x   (rocprof-compute)

Roof: a rocprof-compute workload folder brings its roofline.csv (the peaks rocprof-compute
benchmarked on this machine: a measured roof, device 0) when no --on is given; any
roofline.csv also works as --on roofline.csv, here and in `rooflab report` / `plot`.

FLOP: 64 x (ADD + MUL + 2 FMA + TRANS) per precision, 512 x MFMA_MOPS; bytes: L1 64 x
TCP_TOTAL_CACHE_ACCESSES, L2 64 x TCP_TCC_*_REQ (else 128 x TCC_REQ), HBM from TCC_EA
read/write requests (32/64 B), else 1024 x (FETCH_SIZE + WRITE_SIZE); MI300 (TCC_BUBBLE or
TCC_EA0_ in the file, or --on an MI300): 128-B lines for L1 accesses, L1->L2 reads and
TCC_BUBBLE reads. rocprofv3 pass folders are joined one process at a time.
"""


def _load(files: list[str], device: str | None = None):
    from ..ingest.rocprof import load_rocprof

    return load_rocprof(files, device=device)


def register(app) -> None:
    profiler_verb(app, "rocprof", HELP, "rocprof CSV file(s); several = steps", _load,
                  device=True)
