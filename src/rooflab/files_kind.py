"""Which program wrote a file, told by its content (file_kind): moved out of files.py (s22),
below every layer as files.py is; hardware and ingest import it from here."""

from __future__ import annotations

import re
from pathlib import Path

from .files import csv_reader, is_directory
from .files_decode import SNIFF, sniff_text

# --- Which program wrote a file, told by content (file_kind) ------------------------------
# Here, below every layer, so that hardware (a file given as a roof that is a profiler's
# output: roof_file_hints) and ingest (which reader a verb's file needs) ask the same
# question without hardware importing ingest (review r1 F6).

# rocprof's kernel-name columns (ingest/rocprof.py reads kernels by them)
ROCPROF_NAME_COLUMNS = ("KernelName", "Kernel_Name", "Kernel-Name", "kernel-name")
# rocprof-compute roofline.csv's bandwidth columns (hardware/rocprof_roofline.py's MEMORY)
ROOFLINE_BANDWIDTH_COLUMNS = ("HBMBw", "MALLBw", "L2Bw", "L1Bw")
# perf stat's events rooflab reads (ingest/perf_stat.py) and its text footer: a line naming
# one of them is perf's, not a kernel CSV's (whose first row is rooflab's column names)
_PERF_WORDS = re.compile(r"seconds time elapsed|duration_time|fp_arith_inst_retired|"
                         r"uncore_imc|cas_count|fp_ret_sse_avx_ops", re.IGNORECASE)
_PERF_JSON_KEY = re.compile(r'"counter-value"\s*:')   # a key of perf stat -j's lines


def file_kind(path: str) -> str:
    """'ncu', 'rocprof', 'torch', 'likwid', 'perf', or 'rooflab' (our JSON/CSV, and anything
    unknown, whose errors then say what is accepted), told by content: a rocprof results.csv,
    an ncu out.csv and a likwid or perf CSV share the suffix of our own CSV, perf stat -j's
    lines our JSON's, a gzipped trace may have lost its name (gzip is looked inside)."""
    p = Path(path)
    if is_directory(p):   # a rocprof output folder, else read_text lists what is in it
        return "rocprof" if _rocprof_folder(p) else "rooflab"
    if path.lower().endswith(".ncu-rep"):
        return "ncu"
    try:
        with p.open("rb") as fh:
            head = fh.read(SNIFF)   # a trace's deviceProperties come first
    except OSError:
        return "rooflab"   # read_text says why it cannot be read
    if head.startswith(b"SQLite format 3"):
        return "rocprof"   # rocprofv3's rocpd database: its reader says to export CSV
    # told by what a gzip stream holds (a gzipped ncu CSV was sent to the torch reader:
    # review s21 r5 F1) and by UTF-16 text as by UTF-8 (PowerShell's `>`: F4)
    return text_kind(sniff_text(head))


def text_kind(text: str) -> str:
    """file_kind's answer for a file's decoded first bytes (SNIFF of them): the one rule,
    which a reader already holding the text asks too (ncu_csv.other_kind)."""
    if text.lstrip()[:1] in ("{", "["):
        if text.lstrip()[:1] == "{" and _PERF_JSON_KEY.search(text):
            return "perf"   # `perf stat -j`: one JSON object a line, not one document
        return "torch" if '"traceEvents"' in text else "rooflab"
    if '"Kernel Name"' in text or "Kernel Name," in text:
        return "ncu"
    if _rocprof_header(text):
        return "rocprof"
    first = text.lstrip().split("\n", 1)[0]
    if first.startswith(("STRUCT,Info", "TABLE,Region ", "TABLE,Group ")):
        return "likwid"
    perf = _PERF_WORDS.search(text) and not first.lower().startswith("name")
    return "perf" if perf else "rooflab"


def _rocprof_folder(folder: Path) -> bool:
    """The folders `rooflab rocprof` takes: rocprof-compute's workload folder (pmc_perf.csv),
    rocprof v1's (results.csv), rocprofv3's (*_counter_collection.csv, in pass_N/ too)."""
    if (folder / "pmc_perf.csv").is_file() or (folder / "results.csv").is_file():
        return True
    # rocprofv3 writes OUT/HOST/PID_counter_collection.csv, with passes OUT/HOST/pass_N/...:
    # three levels, not a walk of whatever tree was given by mistake
    return any(next(folder.glob(f"{'*/' * depth}*_counter_collection.csv"), None) is not None
               for depth in range(4))


def _rocprof_header(text: str) -> bool:
    """A rocprof header (KernelName, Kernel_Name, ...) in the first lines, or one of the
    rocprof files its reader names and refuses (--stats summaries, roofline.csv)."""
    lines = text.splitlines()[:50]
    for i, row in enumerate(csv_reader(lines)):
        cells = {c.strip() for c in row}
        if cells & set(ROCPROF_NAME_COLUMNS):
            return True
        if i == 0 and ({"Name", "Calls", "TotalDurationNs"} <= cells
                       or is_roofline_header(cells)):
            return True
    return False


def is_roofline_header(cells) -> bool:
    """The one rule for a roofline.csv header: it names a bandwidth column (HBMBw, MALLBw,
    L2Bw, L1Bw); kernel files and profiler readers ask this same question."""
    return bool({str(c).strip() for c in cells} & set(ROOFLINE_BANDWIDTH_COLUMNS))


# --- Intel Advisor's per-loop survey CSV (ingest/advisor_survey.py reads it) --------------
# `advisor --report=survey --format=csv [--show-all-columns]`: its header names the loop
# column and the roofline's Self columns (reframe-hpc/reframe's intel_advisor_roofline.py:
# Self GFLOPS = Self GFLOP / Self Elapsed Time, Self GB/s = Self Memory GB / Self Elapsed
# Time). file_kind leaves it 'rooflab': kernelfile.load_kernels tells it apart, so that
# `report loops.csv` reads it as a kernel file and a missing column's error names Advisor.
ADVISOR_LOOP_COLUMN = "Function Call Sites and Loops"
ADVISOR_SELF_COLUMNS = ("Self GFLOP", "Self Memory GB", "Self Elapsed Time", "Self GFLOPS",
                        "Self GB/s", "Self AI")
ADVISOR_DELIMITERS = (",", "\t", ";")


def advisor_header(text: str) -> tuple[int, str] | None:
    """(0-based line, delimiter) of an Advisor survey CSV's header among the first lines
    (a 'sep=,' line, a banner and a version line come before it), None when there is none:
    the loop column, or two of the Self columns."""
    for n, line in enumerate(text.splitlines()[:60]):
        for delimiter in ADVISOR_DELIMITERS:
            cells = {c.strip().strip('"') for c in line.split(delimiter)}
            if ADVISOR_LOOP_COLUMN in cells or len(cells & set(ADVISOR_SELF_COLUMNS)) >= 2:
                return n, delimiter
    return None


def is_advisor_survey(text: str) -> bool:
    return advisor_header(text) is not None
