"""What a file given as a roof (--on FILE, --among, --hardware) is instead, when it is no
roof: a kernel file belongs in the verb's positional arguments, a profiler's output goes to
its own verb. Said in the error, so the user does not read 'not a roofline.csv' as 'fix the
roofline.csv'."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ..files_kind import file_kind

ROOF_IS = ("a roof is a catalog name (`rooflab specs list`), a profile .json (`rooflab probe "
           "-o me.json`) or rocprof-compute's roofline.csv")
_PROFILERS = {"ncu": "an Nsight Compute", "rocprof": "a rocprof", "likwid": "a likwid",
              "perf": "a perf stat", "torch": "a PyTorch profiler trace"}
# a kernel CSV's header: a name and a count (ingest/kernelfile_csv.py); not 'seconds' alone,
# which choose's ranking CSV (rank,name,seconds) has too
_KERNEL_COUNTS = frozenset({"flop", "bytes", "gflops"})


def not_a_roof(path: str, data: object = None) -> str | None:
    """'it is a kernel file: ...', to follow the caller's 'not a roof file', or None when
    the file is none of those. data: the parsed JSON when the caller has it (a CSV is
    sniffed from its header)."""
    kind = file_kind(path)
    if kind in _PROFILERS:
        return (f"it is {_PROFILERS[kind]} file; put its kernels on a roof with "
                f"`rooflab {kind} FILE --on h100`; {ROOF_IS}")
    if data is None and _advisor_survey(path):
        return ("it is Intel Advisor's survey (per-loop) CSV, a kernel file: kernel files "
                "are the verb's positional arguments (`rooflab report loops.csv --on "
                "roof.json`); Advisor's roofs are `advisor --report=roofs --format=csv`, "
                f"imported with `rooflab specs import roofs.csv`; {ROOF_IS}")
    if _kernel_json(data) or (data is None and _kernel_csv(path)):
        return ("it is a kernel file, and kernel files are the verb's positional arguments "
                f"(`rooflab report FILE --on h100`); {ROOF_IS}")
    return None


def _kernel_json(data: object) -> bool:
    """A kernel list, bare or under 'kernels' (an analysis JSON without its roof)."""
    items = data.get("kernels") if isinstance(data, dict) else data
    return isinstance(items, list) and bool(items) and \
        all(isinstance(k, dict) and "name" in k for k in items)


def _advisor_survey(path: str) -> bool:
    from ..files_kind import is_advisor_survey

    text = _head(path)
    return text is not None and is_advisor_survey(text)


def _kernel_csv(path: str) -> bool:
    try:
        with Path(path).open(encoding="utf-8-sig", errors="replace") as fh:
            first = fh.readline()
    except OSError:
        return False
    cells = {c.strip().strip('"').lower() for c in first.split(",")}
    return "name" in cells and bool(cells & _KERNEL_COUNTS)


# ------------------------------------------------ other roofline tools' text outputs
#
# Files users bring as a roof that rooflab does not read as one: each is told by its own
# marks, and the error gives the `rooflab specs import` line that makes a roof of it, with
# the file's own figures where the file has them in a known unit (review s20 r6 F6, F7:
# every one of them got "save it with likwid-bench", or a JSON parse error under --on).

_SNIFF = 256 * 1024   # the head read; every mark below sits in the first lines


def tool_output_hint(path: str, importing: bool = False) -> str | None:
    """What the file is and the command that makes a roof of it, to follow 'PATH: ' in an
    error; None for a file none of these tools wrote. importing: said by `specs import`
    (the command is the fix itself), else by --on (import it first, then --on roof.json).
    likwid-bench output is read by `specs import`, so only --on gets its line."""
    text = _head(path)
    if text is None:
        return None
    then = "" if importing else ", then --on roof.json"
    first = "type its figures" if importing else "import it first"
    from ..files_kind import is_roofline_header
    from .import_roofs import is_likwid_bench

    if not importing and is_likwid_bench(text):
        args, at = _likwid_args(path, text)
        where = (" (@L1, @L2, @L3 or @DRAM: where the run's working set sat)" if at else "")
        return (f"it is likwid-bench output, not a roof; import it first with "
                f"`rooflab specs import {args} -o roof.json`{where}{then}")
    if is_roofline_header(text.split("\n", 1)[0].split(",")):
        return ("it is rocprof-compute's roofline.csv, a roof as it stands: pass it to --on "
                f"(`rooflab report KERNELS --on {shlex.quote(path)}`), no import needed"
                if importing else None)
    said = None if importing else _advisor_roofs(path, text, then)
    if said:
        return said
    for sniff in (_ert_sum, _stream, _advisor_xml, _nvbandwidth):
        said = sniff(text, first)
        if said:
            return said + then
    return None


def _head(path: str) -> str | None:
    try:
        with Path(path).open("rb") as fh:
            head = fh.read(_SNIFF)
    except OSError:
        return None
    if b"\x00" in head:
        return None
    return head.decode("utf-8", errors="replace").lstrip("\ufeff").replace("\r\n", "\n")


def _typed(flags: list[tuple[str, str]]) -> str:
    return "rooflab specs import " + " ".join(f"{f} {v}" for f, v in flags) + \
        " --measured -o roof.json"


def _likwid_args(path: str, text: str) -> tuple[str, bool]:
    """'triad.txt@DRAM peakflops.txt': the file at a level when it has a bandwidth run,
    and a peakflops file beside it when it has no compute peak (or --dram, the reverse)."""
    kernels = [k.lower() for k in re.findall(r"^\s*Test:\s*(\S+)", text, re.M)]
    peak = any(k.startswith("peakflops") for k in kernels)
    bandwidth = any(not k.startswith("peakflops") for k in kernels)
    args = [shlex.quote(f"{path}@DRAM" if bandwidth else path)]
    args += [] if peak else ["peakflops_avx_fma.txt"]
    args += [] if bandwidth else ["--dram 83GB/s"]
    return " ".join(args), bandwidth


# ERT's per-run `sum` (Results/.../FLOPS.nnn/MPI.*/OpenMP.*/sum, Scripts/summary.py): "  11.03
# GFLOPs", "  1458.88 Weight", "  176.44 L1" ... "  18.30 DRAM", then META_DATA with the
# run's FLOPS (per element), MPI_PROCS, OPENMP_THREADS and CONFIG (its 'ERT_FLOPS': the
# sweep); GB/s and GFLOP/s, decimal. `cat */sum` (what Scripts/roofline.py reads) puts
# several runs in one file, each from its GFLOPs line on.
_ERT_SUM_LINE = re.compile(r"^\s*([0-9.]+)\s+(GFLOPs|Weight|L[1-9]\d*|DRAM|HBM|MCDRAM)\s*$",
                           re.M)
_ERT_GFLOPS = re.compile(r"^\s*[0-9.]+\s+GFLOPs\s*$", re.M)


def _ert_runs(text: str) -> list[dict]:
    """Each run of a sum file: 'at' {name: figure} (GFLOPs, Weight, L1 ... DRAM), and where
    its META_DATA says them 'FLOPS' (per element), 'mpi', 'omp', 'sweep' (ERT_FLOPS'
    largest) and 'most' (ERT_PROCS_THREADS' largest)."""
    starts = [m.start() for m in _ERT_GFLOPS.finditer(text)] + [len(text)]
    runs = []
    for a, b in zip(starts, starts[1:], strict=False):
        chunk = text[a:b]
        run: dict = {"at": {name: v for v, name in _ERT_SUM_LINE.findall(chunk)}}
        for key, name in (("FLOPS", "FLOPS"), ("mpi", "MPI_PROCS"), ("omp", "OPENMP_THREADS")):
            m = re.search(rf"^{name}\s+(\d+)\s*$", chunk, re.M)
            if m:
                run[key] = int(m[1])
        for key, name in (("sweep", "ERT_FLOPS"), ("most", "ERT_PROCS_THREADS")):
            m = re.search(rf"'{name}':\s*\['([^']*)'\]", chunk)
            if m and re.findall(r"\d+", m[1]):   # '1,2,4,8,16' or a range, '1-16'
                run[key] = max(int(n) for n in re.findall(r"\d+", m[1]))
        runs.append(run)
    return runs


def _ert_sum(text: str, first: str) -> str | None:
    if "META_DATA" not in text or not _ERT_GFLOPS.search(text):
        return None
    runs = _ert_runs(text)
    # the bandwidths of the run with the largest Weight, as Scripts/roofline.py takes them
    band = max(runs, key=lambda r: float(r["at"].get("Weight", 0)))
    flags = [(f"--{lv.lower()}", f"{band['at'][lv]}GB/s") for lv in ("L1", "L2", "L3", "DRAM")
             if lv in band["at"]]
    more = sorted(n for n in band["at"]
                  if n not in ("L1", "L2", "L3", "DRAM", "GFLOPs", "Weight"))
    left = (f"; {', '.join(more)} left out: ERT counts plateaus, and rooflab's levels are "
            f"L1 L2 L3 DRAM") if more else ""
    peak, why, peak_run = _ert_peak(runs)
    flags.append(("--fp64", peak))
    # a 1 x 1 run's figures are one core's: said for each run a typed figure is from
    procs = (_procs(band, "figures") if peak_run is band else
             _procs(band, "bandwidths") + (_procs(peak_run, "GFLOPs") if peak_run else ""))
    return (f"it is ERT's `sum` of {'one run' if len(runs) == 1 else f'{len(runs)} runs'}, "
            f"not a roof: ERT's roof is the Results folder's roofline.json (give that: its "
            f"GFLOPs is the best over every FLOPs per element); or {first} with "
            f"`{_typed(flags)}` (fp64: ERT's default build; {why}{procs}{left})")


def _ert_peak(runs: list[dict]) -> tuple[str, str, dict | None]:
    """(--fp64's value, why, the run it is from). A run's GFLOPs is a compute peak only
    at enough FLOPs per element: ERT's kernel moves 16 B per element (driver1.c: 8-byte
    elements, 2 accesses), so its 1-FLOP run has AI 1/16 and is bandwidth-bound (review s20
    x1 F4: the real p100 Run.018 1-FLOP sum gives 11.03 GFLOPs, its L1 176.44 GB/s x 1/16;
    that Run's roofline.json peak, from a 16-FLOP run, is 288.33). So the figure is typed
    only as ERT's Scripts/roofline.py would take it: the largest GFLOPs over runs that
    include the sweep's highest FLOPs per element (ERT_FLOPS in CONFIG; without it, runs at
    several settings), never over 1-FLOP runs alone. Otherwise PEAK, and the words say
    where a peak comes from: roofline.json or the catalog (`specs import` refuses a roof
    without a compute peak, so leaving --fp64 out would give a command that fails)."""
    per = sorted({r["FLOPS"] for r in runs if "FLOPS" in r})
    sweep = max((r["sweep"] for r in runs if "sweep" in r), default=None)
    covered = (sweep in per) if sweep is not None else len(per) > 1
    top_run = max(runs, key=lambda r: float(r["at"].get("GFLOPs", 0)))
    best = top_run["at"]["GFLOPs"]
    if covered and per[-1] > 1:
        which = (f"its run at {per[0]} FLOPs per element, the sweep's highest" if len(per) == 1
                 else f"the best of its runs at {', '.join(map(str, per))} FLOPs per element")
        return (f"{best}GFLOP/s", f"GFLOPs: {which}, as ERT's roofline.json takes it",
                top_run)
    at = (f"at {', '.join(map(str, per))} FLOP{'' if per == [1] else 's'} per element"
          if per else "at a FLOPs per element it does not say")
    top = f" (the sweep goes to {sweep})" if sweep is not None else ""
    return "PEAK", (f"PEAK: not its {best} GFLOPs, which is {at}{top}: bandwidth-bound, no "
                    f"compute peak; type the GFLOPs of the Results folder's roofline.json, "
                    f"or the catalog's fp64 peak (`rooflab specs show NAME`)"), None


def _procs(run: dict, what: str) -> str:
    """Said when a run whose figures are typed used fewer processes x threads than the
    sweep's most: roofline.json takes each figure at its best count, a 1 x 1 run's are one
    core's."""
    n = run.get("mpi", 1) * run.get("omp", 1)
    if "most" not in run or n >= run["most"]:
        return ""
    return (f"; its {what} are of {run.get('mpi', 1)} process x {run.get('omp', 1)} thread, "
            f"and the sweep goes to {run['most']}: roofline.json has the best count's")


def _stream(text: str, first: str) -> str | None:
    if "STREAM version" not in text and "Best Rate MB/s" not in text:
        return None
    m = re.search(r"^\s*Triad:\s+([0-9.]+)", text, re.M)
    rate = f"{m[1]}MB/s" if m else "TRIAD_RATE_MB/s"
    return (f"it is STREAM output, a DRAM bandwidth and no compute peak; {first} with "
            f"`{_typed([('--dram', rate), ('--fp64', 'PEAK')])}` (Triad's Best Rate MB/s, "
            f"STREAM's MB being 1e6 B, write-allocate not counted; PEAK: the machine's "
            f"measured fp64 peak, e.g. 355GFLOP/s, or a likwid-bench peakflops_avx_fma "
            f"output in its place)")


def _advisor_roofs(path: str, text: str, then: str) -> str | None:
    """Advisor's roofs report (CSV or text) given as --on: `specs import` reads it whole
    (hardware/advisor_roofs.py); it used to be refused there too, with a command to retype
    four of its figures (review s26 r2 F5)."""
    from .advisor_roofs import is_advisor_roofs

    if not is_advisor_roofs(text):
        return None
    quoted = shlex.quote(path)
    return (f"it is Intel Advisor's roofs report, not a roof; import it first with "
            f"`rooflab specs import {quoted} -o roof.json` (every CPU roof it holds; "
            f"{quoted}@1t: its single-threaded ones){then}")


def _advisor_xml(text: str, first: str) -> str | None:
    if "<RoofItems" not in text:
        return None
    del first   # its CSV form is read as it stands: the command is the same either way
    return ("it is Intel Advisor's roofs XML, not a roof; export the same roofs as CSV "
            "with `advisor --report=roofs --format=csv --project-dir=DIR --report-output="
            "roofs.csv` and import that: `rooflab specs import roofs.csv -o roof.json` "
            "(every CPU roof it holds)")


def _nvbandwidth(text: str, first: str) -> str | None:
    if "nvbandwidth Version" not in text:
        return None
    del first   # it has no figure of a roof to type
    return ("it is nvbandwidth output: copy bandwidths over the host and GPU links (PCIe, "
            "NVLink), not the GPU's memory bandwidth or a compute peak; use the GPU's "
            "catalog entry (--on h100; `rooflab specs list`), or type the GPU's own "
            "measured figures: `" + _typed([("--dram", "3TB/s"),
                                            ("--fp16", "700TFLOP/s@tensor")]) + "`")
