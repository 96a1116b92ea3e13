"""Which kind of machine a roof belongs to (CPU, GPU, accelerator), and its levers' words.

Advice, diagnosis and sanity findings name the levers of the machine at hand: occupancy,
coalescing, CUDA graphs and tensor cores on a GPU; SIMD width and FMA, cache blocking,
threads / NUMA first-touch, AMX / AVX512-BF16 / VNNI and Python/framework dispatch on a CPU.
The kind comes from what the caller knows (a catalog Device.kind), the profile's host section
(`rooflab probe` writes kind "cpu" and the CPU flags; the GPU probe writes backend "cuda"), or
evidence in the roof itself; an unknown kind keeps neutral wording. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .ceiling import Roof


@dataclass(frozen=True)
class Machine:
    """What kind of machine a roof belongs to, so advice names its levers (CPU or GPU).

    kind: "cpu" | "gpu" | "accelerator" | "" (unknown: neutral wording). features: SIMD and
    matrix extensions seen in the host's flags or the roof's ceiling methods (avx512, avx2,
    fma, neon, sve, amx, avx512_bf16, vnni). caches: bytes per level (L1, L2, L3) when known.
    """

    kind: str = ""
    features: frozenset[str] = frozenset()
    caches: Mapping[str, float] = field(default_factory=dict)
    # What the probe recorded of other work on the machine while it measured the roof
    # (probe/cpu/load.py: extras.machine_load, whose notes the measured roof carries too):
    # the notes, and the largest share of the CPUs (or steal) they name, when one is given.
    load_notes: tuple[str, ...] = ()
    other_load: float | None = None
    # The profile's nominal (datasheet) roof beside a measured one being judged, so a
    # precision lever is held to the nominal ceiling ratio, not a loaded probe's (review r4
    # F3: fp32/fp64 read 3.40x, nominal 2x). None when the judged roof is the nominal one.
    nominal: Roof | None = None
    # The probe's per-call floors (extras.overhead: numba no-op, numpy call, ...) by name, in
    # seconds, so a loop of small calls is priced at its own kind's dispatch cost (review r5
    # F3: a numpy call costs 349 ns here, the numba no-op floor 177 ns).
    call_floors: Mapping[str, float] = field(default_factory=dict)
    # The host's physical cores (host.cores), when the profile says: a scalar ceiling scales
    # up to a kernel's threads only over real cores (SMT siblings share the FMA pipes;
    # advice_vectorize._thread_share). None when unknown.
    cores: int | None = None

    @property
    def simd(self) -> str:
        for feat, name in (("avx512", "AVX-512"), ("avx2", "AVX2"), ("sve", "SVE"),
                           ("neon", "NEON")):
            if feat in self.features:
                return name
        return "SIMD"


def core_share(n: int, have: int, cores: int | None) -> float:
    """The share of a scalar ceiling measured on `have` threads that `n` threads reach.
    Scalar FMA throughput is per core and SMT siblings share a core's FMA pipes, so with
    the host's core count both sides count only threads on distinct cores:
    min(n, cores) / min(have, cores) (1 thread of a 2-thread roof on 1 core: all of it).
    Without it n / have under the roof's threads and 1 above (they may be SMT siblings)."""
    if cores:
        return min(n, cores) / min(have, cores)
    return min(n, have) / have


# Evidence of the machine kind in a roof's name, source and ceiling methods (lower case).
# Catalog CPU peaks are derived as "cores x GHz x lanes x FMA pipes" (hardware/data/*.toml).
_GPU_WORDS = ("gpu cores", "--device cuda", "nvidia", "geforce", "tesla", "quadro", "radeon",
              "instinct", "rtx", "hbm", "gddr", "gpu")
_CPU_WORDS = ("fma pipes", "lanes", "avx", "amx", "vnni", "neon", "sdot", "rooflab probe (numba",
              "--device cpu", "xeon", "epyc", "ryzen", "threadripper", "core i", "graviton",
              "altra", "cpu")
_ACCEL_WORDS = ("tpu", "gaudi", "trainium", "inferentia")


def _has(text: str, hints: tuple[str, ...]) -> bool:
    """True when a hint starts a word of text ('output' does not hold 'tpu')."""
    return any(re.search(r"(?<![a-z0-9])" + re.escape(h.strip()), text) for h in hints)


_FEATURE_FLAGS = {"avx512f": "avx512", "avx2": "avx2", "fma": "fma", "asimd": "neon",
                  "neon": "neon", "sve": "sve", "amx_tile": "amx", "amx_bf16": "amx",
                  "avx512_bf16": "avx512_bf16", "avx512_vnni": "vnni", "avx_vnni": "vnni"}
_FEATURE_WORDS = {"amx": "amx", "avx512-bf16": "avx512_bf16", "vnni": "vnni", "neon": "neon",
                  "sve": "sve", "sdot": "neon"}


def _simd_from_lanes(roof: Roof, text: str) -> set[str]:
    """A catalog CPU's vector width from its fp64 peak's derivation ('8 lanes x 2 FMA pipes'):
    8 fp64 lanes are 512-bit vectors (AVX-512 on x86), 4 are 256-bit (AVX2, or SVE-256 on Arm),
    2 are 128-bit (NEON)."""
    c = roof.find_compute("fp64")
    found = re.search(r"(\d+) lanes", c.method) if c is not None else None
    if found is None:
        return set()
    arm = re.search(r"\b(neoverse|graviton|altra|grace|arm|aarch64)\b", text) is not None
    width = int(found.group(1))
    feats = {"fma"} if "fma" in c.method.lower() else set()
    if arm:
        return feats | ({"sve"} if width >= 4 else {"neon"})
    return feats | ({"avx512"} if width >= 8 else {"avx2"} if width == 4 else set())


def _host_kind(host: Mapping[str, Any]) -> str:
    kind = str(host.get("kind") or "").lower()
    if kind in ("cpu", "gpu", "accelerator"):
        return kind
    backend = str(host.get("backend") or host.get("device") or "").lower()
    if backend.startswith(("cuda", "rocm", "hip", "mps")):
        return "gpu"
    if backend.startswith("cpu") or host.get("flags") or host.get("cpu_model"):
        return "cpu"
    return ""


def machine_of(roof: Roof, host: Mapping[str, Any] | None = None, kind: str = "") -> Machine:
    """The machine behind a roof: `kind` when the caller knows it (a catalog Device.kind),
    else the profile's host section, else evidence in the roof (names, sources, methods)."""
    host = host or {}
    text = " ".join([roof.name, roof.source] + [c.method + " " + c.source
                                               for c in roof.compute]).lower()
    kind = kind or _host_kind(host)
    if not kind:
        if _has(text, _ACCEL_WORDS):
            kind = "accelerator"
        elif _has(text, ("fma pipes",)):
            kind = "cpu"        # a catalog CPU's derivation wins over its vendor (NVIDIA Grace)
        elif _has(text, _GPU_WORDS):
            kind = "gpu"
        elif _has(text, _CPU_WORDS):
            kind = "cpu"
        elif any(c.unit == "scalar" for c in roof.compute):
            # only a CPU roof has a scalar (no SIMD) ceiling: `specs import --fp64
            # X@scalar` without --from had no other evidence (review s19 r4 F7)
            kind = "cpu"
        elif any(c.precision == "tf32" or c.unit == "tensor" for c in roof.compute):
            kind = "gpu"        # tensor cores (tf32 is an NVIDIA format) and no CPU evidence
    feats = {_FEATURE_FLAGS[f] for f in host.get("flags") or () if f in _FEATURE_FLAGS}
    if kind == "cpu":
        feats |= {v for w, v in _FEATURE_WORDS.items() if _has(text, (w,))}
        if not host.get("flags"):
            feats |= _simd_from_lanes(roof, text)
    caches: dict[str, float] = {}
    raw = host.get("caches") if isinstance(host.get("caches"), Mapping) else {}
    for key, level in (("l1d", "L1"), ("L1", "L1"), ("l2", "L2"), ("L2", "L2"),
                       ("l3", "L3"), ("L3", "L3")):
        if isinstance(raw.get(key), int | float) and raw[key] > 0:
            caches[level] = float(raw[key])
    if "L2" not in caches and isinstance(host.get("l2_bytes"), int | float):
        caches["L2"] = float(host["l2_bytes"])
    notes, share = machine_load(roof, host)
    cores = host.get("cores")
    cores = int(cores) if isinstance(cores, int) and not isinstance(cores, bool) \
        and cores >= 1 else None
    return Machine(kind, frozenset(feats), caches, notes, share, cores=cores)


# One rule for "is this roof a CPU's" (review s19 x2 F16: the strided-access unit and the
# write-allocate read used opposite defaults). A GPU or accelerator roof is not; a roof
# whose machine_of kind is unknown (a hand-written roof with no host, name or method
# evidence) reads as a CPU, rooflab's own probe's machine, and its byte models say so.
ASSUMED_CPU = "a CPU assumed: the roof names no machine kind (no host, name or method evidence)"


def is_cpu(roof: Roof) -> bool:
    """Whether the roof's machine is a CPU: any kind but "gpu" and "accelerator"."""
    return machine_of(roof).kind not in ("gpu", "accelerator")


def kind_unknown(roof: Roof) -> bool:
    """Whether is_cpu(roof) is the assumption (ASSUMED_CPU), not the roof's evidence."""
    return machine_of(roof).kind == ""


# Words the probe's load notes are made of (probe/cpu/flags.py machine_load_notes).
_LOAD_WORDS = ("while the probe ran", "before the probe started")


def machine_load(roof: Roof, host: Mapping[str, Any] | None = None
                 ) -> tuple[tuple[str, ...], float | None]:
    """Whether the roof was measured on a shared machine: the probe's load notes (the host
    mapping's 'machine_load' when a caller passes the profile's extras entry, else the
    measured roof's own notes, which the CPU probe puts first) and the largest percentage
    they name (other processes' share of the CPUs, or steal), as a fraction."""
    load = (host or {}).get("machine_load")
    notes: tuple[str, ...] = ()
    if isinstance(load, Mapping) and load.get("notes"):
        notes = tuple(str(n) for n in load["notes"])
    if not notes:
        notes = tuple(n for n in roof.notes if isinstance(n, str) and _has_load(n))
    # '82 %' (SI style, today's notes) or '82%' (a profile written before session 32)
    shares = [float(m) / 100 for n in notes for m in re.findall(r"(\d+(?:\.\d+)?) ?%", n)]
    if isinstance(load, Mapping):
        for key in ("contended_share", "other_cpu_share", "steal_share"):
            if isinstance(load.get(key), int | float):
                shares.append(float(load[key]))
    return notes, (max(shares) if shares else None)


def _has_load(note: str) -> bool:
    return any(w in note for w in _LOAD_WORDS)


# The levers each kind of machine offers for one distance, worded for that machine.
# (action, why) pairs; the neutral entry names both so an unknown roof still reads right.
WORDS: dict[str, dict[str, tuple[str, str]]] = {
    "gpu": {
        "tile": ("tile for data reuse (shared memory / registers / cache blocking)", ""),
        "access": ("coalesce accesses (contiguous, aligned, vectorised loads)",
                   "strided or scattered accesses waste memory transactions (seed 000: "
                   "30 % -> 85 % of bandwidth after coalescing)"),
        "issue": ("raise occupancy and ILP (unroll, fewer registers, fewer branches)",
                  "issue slots go to address arithmetic, stalls and idle warps"),
        "parallel": ("expose more parallelism, fewer synchronisations",
                     "far below the roof without a launch floor to explain it: memory "
                     "latency, barriers or too few threads in flight (seed 000 §6.2)"),
        "dispatch": ("capture in a CUDA graph (or torch.compile mode='reduce-overhead')",
                     "graph replay removes the per-launch CPU cost; the GPU work runs as it "
                     "does now"),
        "chip": ("on chip", "kernel"),
    },
    "cpu": {
        "tile": ("block for cache reuse (L1/L2/L3 tiles, register blocking)", ""),
        "access": ("stream with full-width SIMD loads on every core (unit stride, aligned, "
                   "NUMA first-touch)",
                   "strided or gathered accesses waste cache lines and prefetch, and one "
                   "thread cannot draw the socket's DRAM bandwidth (the roof was measured "
                   "with every core)"),
        "issue": ("vectorise with FMA on every core ({simd}, unroll for ILP)",
                  "the flat roof assumes every core issues full-width {simd} FMAs each "
                  "cycle; scalar code, separate multiply and add, one thread or spills "
                  "fall short"),
        "issue_matrix": ("run it as a tuned BLAS / oneDNN GEMM on every core (register + "
                         "cache blocking, {simd} FMA micro-kernel; check its thread count)",
                         "a matrix op reaches the flat roof only with register tiles, L1/L2 "
                         "blocking and every core busy"),
        "parallel": ("spread the work over every core (threads), fewer barriers",
                     "far below the roof without a dispatch floor to explain it: one thread "
                     "on a multi-core roof, serial dependencies or memory latency "
                     "(seed 000 §6.2)"),
        "dispatch": ("cut Python/framework dispatch (torch.compile, one fused op, fewer "
                     "small calls)",
                     "the per-call interpreter and framework cost goes; the work runs as it "
                     "does now"),
        "chip": ("in cache", "op"),
    },
    "": {
        "tile": ("tile for data reuse (cache blocking, shared memory, registers)", ""),
        "access": ("make accesses contiguous and vectorised (coalesced on a GPU, unit-stride "
                   "SIMD on a CPU)",
                   "strided or scattered accesses waste memory transactions (seed 000: "
                   "30 % -> 85 % of bandwidth after coalescing)"),
        "issue": ("raise parallelism and ILP (FMA, unroll, vector units, fewer branches)",
                  "issue slots go to address arithmetic, stalls and idle units"),
        "parallel": ("expose more parallelism, fewer synchronisations",
                     "far below the roof without a launch floor to explain it: memory "
                     "latency, barriers or too little parallelism (seed 000 §6.2)"),
        "dispatch": ("cut per-call launch/dispatch cost (CUDA graphs on a GPU, fewer "
                     "Python/framework calls on a CPU)",
                     "the per-call cost goes; the work runs as it does now"),
        "chip": ("on chip", "kernel"),
    },
}


def words(machine: Machine | None, key: str) -> tuple[str, str]:
    """(action, why) for a lever on this kind of machine; accelerators read as neutral."""
    m = machine or Machine()
    table = WORDS.get(m.kind, WORDS[""])
    action, why = table.get(key) or WORDS[""].get(key) or table["issue"]
    return action.format(simd=m.simd), why.format(simd=m.simd)
