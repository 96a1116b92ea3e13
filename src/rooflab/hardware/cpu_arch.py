"""CPU microarchitectures: the table of core designs (SIMD width, FMA pipes, fast paths) and
the tables that name them (CPUID family/model, Arm part numbers, model-name patterns).

The FMA pipe count is not in CPUID, so it comes from a table by microarchitecture
(vendor optimisation guides, Agner Fog's microarchitecture manual, WikiChip, Chips and
Cheese; each entry cites its source). Peak FLOP/s = cores x GHz x lanes x pipes x 2
(`model.roofline.cpu_peak_flop_per_s`; one FMA is 2 FLOP).

`simd_bits` is the width of one FMA *datapath*, not of the widest instruction: Zen 4
runs AVX-512 on 256-bit pipes ("double-pumped"), so it is listed as 256 bits x 2 pipes
(16 fp64 FLOP/cycle/core) with `isa_bits` 512.

Adding a design: an ARCHS entry with its source, and its family/model (or name pattern)
below. Detection from CPUID-like data is `hardware.cpu_detect`; the derived roofs are
`hardware.cpu_nominal`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..units import fmt_times

AGNER = "https://www.agner.org/optimize/microarchitecture.pdf"
INTEL_OPT = ("https://www.intel.com/content/www/us/en/developer/articles/technical/"
             "intel64-and-ia-32-architectures-optimization.html")


@dataclass(frozen=True)
class FastPath:
    """A narrower-precision path that runs faster than fp32 FMA (VNNI, AVX512-BF16, AMX, ...).

    `flop_per_cycle` is per core, counting a multiply-add as 2 (Intel counts AMX the same
    way: 1024 bf16 / 2048 int8 "ops" per cycle per core).
    """

    precision: str
    unit: str
    flop_per_cycle: float
    via: str
    flags: tuple[str, ...] = ()  # any one of these cpuinfo flags enables it; () = always


@dataclass(frozen=True)
class MicroArch:
    """One CPU core design: what one core can retire per cycle at most."""

    name: str
    vendor: str
    simd_bits: int          # width of one FMA datapath
    fma_pipes: int          # FMA pipes of that width per core (0 = unknown: no nominal)
    isa_bits: int = 0       # widest vector instruction (0 = same as simd_bits)
    fast_paths: tuple[FastPath, ...] = ()
    source: str = ""
    notes: tuple[str, ...] = ()
    # Separate FP add pipes of simd_bits beside the FMA pipes (Zen 2/3/4: FP2/FP3). The
    # derived peak counts FMA pipes only, as the probe's FMA kernel does, so add-heavy code
    # can legitimately exceed it (add_pipes_note).
    add_pipes: int = 0

    @property
    def add_headroom(self) -> float:
        """Most FLOP/cycle with the add pipes busy too, over the FMA-only peak: 1.5 for two
        256-bit FMA pipes (16 fp64 FLOP/cycle) plus two 256-bit FADD pipes (8 more)."""
        fma = self.flop_per_cycle(64)
        return (fma + (self.simd_bits // 64) * self.add_pipes) / fma if fma else 1.0

    @property
    def add_pipes_note(self) -> str | None:
        """One line for a derived peak's explanation: what the FMA-pipe count leaves out."""
        if not self.add_pipes or not self.nominal_known:
            return None
        return (f"{self.name} also has {self.add_pipes} FADD pipes beside its "
                f"{self.fma_pipes} FMA pipes, not counted: add-heavy code can reach up to "
                f"{fmt_times(self.add_headroom)} this peak")

    @property
    def vector_isa_bits(self) -> int:
        return self.isa_bits or self.simd_bits

    @property
    def nominal_known(self) -> bool:
        """Whether the table knows the FMA pipe count, so a nominal peak can be derived."""
        return self.fma_pipes > 0

    def flop_per_cycle(self, element_bits: int) -> float:
        """Vector FLOP per cycle per core for elements of this width (FMA = 2 FLOP)."""
        return (self.simd_bits // element_bits) * self.fma_pipes * 2.0

    @property
    def fp64_flop_per_cycle(self) -> float:
        """fp64 FLOP per cycle per core, as docs/CONTRACTS.md documents MicroArch; rooflab
        itself calls flop_per_cycle (used by tests as an oracle)."""
        return self.flop_per_cycle(64)

    @property
    def fp32_flop_per_cycle(self) -> float:
        """fp32 FLOP per cycle per core (as fp64_flop_per_cycle: used by tests as an oracle)."""
        return self.flop_per_cycle(32)

    def fast_path(self, precision: str, unit: str | None = None) -> FastPath | None:
        found = [f for f in self.fast_paths
                 if f.precision == precision and (unit is None or f.unit == unit)]
        return max(found, key=lambda f: f.flop_per_cycle) if found else None


def _fp32_times(arch_fp32: float, factor: float, precision: str, via: str,
                flags: tuple[str, ...] = (), unit: str = "vector") -> FastPath:
    return FastPath(precision, unit, arch_fp32 * factor, via, flags)


def _arch(name: str, vendor: str, simd_bits: int, pipes: int, source: str,
          isa_bits: int = 0, paths: Iterable[tuple[str, float, str, tuple[str, ...]]] = (),
          amx: tuple[str, ...] = (), add_pipes: int = 0) -> MicroArch:
    """Build a table entry; `paths` are (precision, x fp32 rate, via, flags)."""
    fp32 = (simd_bits // 32) * pipes * 2.0
    fast = [_fp32_times(fp32, f, p, via, fl) for p, f, via, fl in paths]
    # AMX TMUL per core per cycle: 1024 bf16/fp16 FLOP, 2048 int8 OP (Intel AMX brief,
    # https://www.intel.com/content/www/us/en/products/docs/accelerator-engines/
    # advanced-matrix-extensions/ai-solution-brief.html).
    for prec in amx:
        per_cycle = 2048.0 if prec == "int8" else 1024.0
        fast.append(FastPath(prec, "tensor", per_cycle, "AMX", (f"amx_{prec}",)))
    return MicroArch(name, vendor, simd_bits, pipes, isa_bits, tuple(fast), source,
                     add_pipes=add_pipes)


# VNNI (VPDPBUSD) does 4 int8 multiply-adds per 32-bit lane at the FMA rate: 4x fp32.
# AVX512-BF16 (VDPBF16PS) does 2 bf16 multiply-adds per 32-bit lane: 2x fp32.
# AVX512-FP16 and ARM NEON fp16 FMA: twice the lanes of fp32.
_VNNI = ("int8", 4.0, "VNNI dot product", ("avx512_vnni", "avx_vnni"))
_BF16 = ("bf16", 2.0, "AVX512-BF16 dot product", ("avx512_bf16",))
_FP16_512 = ("fp16", 2.0, "AVX512-FP16", ("avx512_fp16",))
_SDOT = ("int8", 4.0, "SDOT/UDOT dot product", ("asimddp",))
_NEON_FP16 = ("fp16", 2.0, "NEON fp16 FMA", ("asimdhp",))

# Zen 2/3/4's FPU has four pipes: FP0/FP1 take FMA/FMUL, FP2/FP3 take FADD (AMD Software
# Optimization Guide for Family 17h/19h, 56305 / 57647: "two FMA ... two FADD"; GCC's
# znver4.md schedules sseadd on fpu2|fpu3). So add-heavy code can exceed the FMA peak by
# up to 1.5x (24 vs 16 fp64 FLOP/cycle/core).
_ZEN_ADD_PIPES = 2

ARCHS: dict[str, MicroArch] = {a.name: a for a in (
    # --- AMD ---------------------------------------------------------------------
    _arch("Zen", "AMD", 128, 2, AGNER),  # 256-bit AVX split over 128-bit FMA pipes
    _arch("Zen 2", "AMD", 256, 2, "https://en.wikichip.org/wiki/amd/microarchitectures/zen_2",
          add_pipes=_ZEN_ADD_PIPES),
    _arch("Zen 3", "AMD", 256, 2, "https://en.wikichip.org/wiki/amd/microarchitectures/zen_3",
          add_pipes=_ZEN_ADD_PIPES),
    # AVX-512 executes on two 256-bit FMA pipes: 16 fp64 FLOP/cycle/core (AMD Zen 4 SOG 57647).
    _arch("Zen 4", "AMD", 256, 2, "https://en.wikichip.org/wiki/amd/microarchitectures/zen_4",
          isa_bits=512, paths=[_VNNI, _BF16], add_pipes=_ZEN_ADD_PIPES),
    # Full 512-bit datapath, two FMA pipes: 32 fp64 FLOP/cycle/core (EPYC 9005, Ryzen 9000).
    _arch("Zen 5", "AMD", 512, 2,
          "https://chipsandcheese.com/p/zen-5s-avx-512-frequency-behavior",
          paths=[_VNNI, _BF16]),
    # Mobile Zen 5 (Strix Point, Krackan Point) keeps AVX-512 on 256-bit pipes.
    _arch("Zen 5 (256-bit datapath)", "AMD", 256, 2,
          "https://chipsandcheese.com/p/amds-strix-point-zen-5-hits-mobile",
          isa_bits=512, paths=[_VNNI, _BF16]),
    # --- Intel -------------------------------------------------------------------
    _arch("Haswell/Broadwell", "Intel", 256, 2, AGNER),
    _arch("Skylake (client)", "Intel", 256, 2, AGNER),
    # Gold 6xxx / Platinum 8xxx have two 512-bit FMA units; Silver, Bronze and most
    # Gold 5xxx only the fused port-0/1 unit (Intel ARK "# of AVX-512 FMA Units").
    _arch("Skylake-SP/Cascade Lake", "Intel", 512, 2,
          "https://en.wikichip.org/wiki/intel/microarchitectures/skylake_(server)",
          paths=[_VNNI]),  # VNNI from Cascade Lake on; the flags drop it on Skylake
    _arch("Skylake-SP/Cascade Lake (1 FMA unit)", "Intel", 512, 1,
          "https://en.wikichip.org/wiki/intel/microarchitectures/skylake_(server)",
          paths=[_VNNI]),
    _arch("Ice Lake/Tiger Lake (client)", "Intel", 512, 1, INTEL_OPT, paths=[_VNNI]),
    # Cooper Lake (3rd-gen Xeon Scalable 83xxH/63xxH/53xxH, family 6 model 0x55): the
    # Cascade Lake core, two 512-bit FMA units, plus AVX512-BF16.
    _arch("Cooper Lake", "Intel", 512, 2,
          "https://en.wikichip.org/wiki/intel/microarchitectures/cooper_lake",
          paths=[_VNNI, _BF16]),
    _arch("Ice Lake-SP", "Intel", 512, 2,
          "https://en.wikichip.org/wiki/intel/microarchitectures/ice_lake_(server)",
          paths=[_VNNI]),
    _arch("Sapphire/Emerald Rapids", "Intel", 512, 2,
          "https://en.wikichip.org/wiki/intel/microarchitectures/sapphire_rapids",
          paths=[_VNNI, _BF16, _FP16_512], amx=("bf16", "int8")),
    _arch("Granite Rapids", "Intel", 512, 2,
          "https://en.wikichip.org/wiki/intel/microarchitectures/granite_rapids",
          paths=[_VNNI, _BF16, _FP16_512], amx=("bf16", "fp16", "int8")),
    # AVX-512 fused off on hybrid parts: P-cores run AVX2 on 2 x 256-bit FMA pipes
    # (Golden Cove, Raptor Cove, and the later Redwood Cove and Lion Cove alike).
    _arch("Golden Cove/Raptor Cove (client)", "Intel", 256, 2,
          "https://en.wikichip.org/wiki/intel/microarchitectures/golden_cove",
          paths=[_VNNI]),
    # E-cores of hybrid parts: AVX2 split over two 128-bit FMA pipes.
    _arch("Gracemont (E-core)", "Intel", 128, 2,
          "https://en.wikichip.org/wiki/intel/microarchitectures/gracemont", paths=[_VNNI]),
    # Crestmont: Meteor Lake's E- and LP E-cores, Sierra Forest (Xeon 6700E) and Grand Ridge.
    # "The same scheduler layout and execution resources as Gracemont", 256-bit AVX split
    # into two 128-bit halves: 2 x 128-bit FMA pipes, 8 fp64 FLOP/cycle; no AVX-512
    # (Chips and Cheese, "Meteor Lake's E-Cores: Crestmont Makes Incremental Progress";
    # ServeTheHome's Xeon 6700E review: no AVX-512 or AMX on the E-cores). AVX-VNNI kept.
    _arch("Crestmont (E-core)", "Intel", 128, 2,
          "https://chipsandcheese.com/p/meteor-lakes-e-cores-crestmont-makes-incremental-"
          "progress", paths=[_VNNI]),
    # Skymont: Lunar Lake's and Arrow Lake's E-cores. "4x128-bit vector execution for the
    # most common floating point and vector integer operations", FMA latency 6 -> 4 cycles
    # (Chips and Cheese, "Intel Details Skymont"); Intel's x86 core lead architect: "we had
    # two FMAs in Crestmont. Now we have four FMAs in Skymont" (Chips and Cheese interview,
    # Intel Tech Tour 2025). 4 x 128-bit FMA pipes: 16 fp64 FLOP/cycle; no AVX-512.
    # Darkmont (Clearwater Forest 0xDD, Panther Lake 0xCC) is left out: its FP pipes are
    # not stated in a source found here (Intel describes it only relative to Sierra Forest).
    _arch("Skymont (E-core)", "Intel", 128, 4,
          "https://chipsandcheese.com/p/intel-details-skymont", paths=[_VNNI]),
    # --- Arm ---------------------------------------------------------------------
    _arch("Neoverse N1", "ARM", 128, 2,
          "https://en.wikichip.org/wiki/arm_holdings/microarchitectures/neoverse_n1",
          paths=[_SDOT, _NEON_FP16]),
    _arch("Neoverse N2", "ARM", 128, 2,
          "https://en.wikichip.org/wiki/arm_holdings/microarchitectures/neoverse_n2",
          paths=[_SDOT, _NEON_FP16]),
    # 2 x 256-bit SVE or 4 x 128-bit NEON: either way 16 fp64 FLOP/cycle/core.
    _arch("Neoverse V1", "ARM", 256, 2,
          "https://developer.arm.com/documentation/pjdoc466751330-9685/latest/",
          paths=[_SDOT, _NEON_FP16]),
    _arch("Neoverse V2", "ARM", 128, 4,
          "https://developer.arm.com/documentation/109898/latest/",
          paths=[_SDOT, _NEON_FP16]),
    # Four 128-bit NEON FMA pipes on the performance cores (Dougall Johnson's tables).
    _arch("Apple M1-M4 (P-core)", "Apple", 128, 4,
          "https://dougallj.github.io/applecpu/firestorm.html",
          paths=[_SDOT, _NEON_FP16]),
)}


def add_pipes_note(text: str) -> str | None:
    """add_pipes_note of the design a derived peak's method names ('... x 2 FMA pipes x 2
    (Zen 4)'), None when it names none with separate add pipes."""
    import re

    for arch in ARCHS.values():
        if arch.add_pipes and re.search(rf"\b{re.escape(arch.name)}\b", text):
            return arch.add_pipes_note
    return None


def get_arch(name: str) -> MicroArch:
    """A table entry by exact name (KeyError lists the names)."""
    try:
        return ARCHS[name]
    except KeyError:
        raise KeyError(f"unknown microarchitecture '{name}'; known: {', '.join(ARCHS)}") from None


# (family, first model, last model, arch) — Linux arch/x86 and AMD revision guides.
AMD_MODELS: tuple[tuple[int, int, int, str], ...] = (
    (0x17, 0x00, 0x2F, "Zen"),
    (0x17, 0x30, 0xFF, "Zen 2"),
    (0x19, 0x00, 0x0F, "Zen 3"),    # Milan
    (0x19, 0x10, 0x1F, "Zen 4"),    # Genoa
    (0x19, 0x20, 0x5F, "Zen 3"),    # Vermeer, Rembrandt, Cezanne
    (0x19, 0x60, 0xAF, "Zen 4"),    # Raphael, Phoenix, Bergamo, Siena
    # Family 0x1a: only Linux's Zen 5 ranges (arch/x86/kernel/cpu/amd.c, X86_FEATURE_ZEN5:
    # 0x00-0x2f, 0x40-0x4f, 0x60-0x7f); the rest of the family is Zen 6 (AMD_ZEN6_MODELS).
    (0x1A, 0x20, 0x2F, "Zen 5 (256-bit datapath)"),  # Strix Point
    (0x1A, 0x60, 0x6F, "Zen 5 (256-bit datapath)"),  # Krackan Point
    (0x1A, 0x00, 0x1F, "Zen 5"),    # Turin
    (0x1A, 0x40, 0x4F, "Zen 5"),    # Granite Ridge
    (0x1A, 0x70, 0x7F, "Zen 5"),    # Strix Halo
)

# Family 0x1a models Linux marks X86_FEATURE_ZEN6 (amd.c: 0x50-0x5f, 0x80-0xaf, 0xc0-0xef).
# AMD has not published Zen 6's FMA pipes, so they get no nominal (cpu_detect._generic).
AMD_ZEN6_MODELS: tuple[tuple[int, int], ...] = ((0x50, 0x5F), (0x80, 0xAF), (0xC0, 0xEF))

# Intel family 6 display models (Intel SDM vol. 4 table 2-1, Linux intel-family.h).
INTEL_MODELS: dict[int, str] = {
    **dict.fromkeys((0x3C, 0x3F, 0x45, 0x46, 0x3D, 0x47, 0x4F, 0x56), "Haswell/Broadwell"),
    **dict.fromkeys((0x4E, 0x5E, 0x8E, 0x9E, 0xA5, 0xA6), "Skylake (client)"),
    0x55: "Skylake-SP/Cascade Lake",
    **dict.fromkeys((0x7D, 0x7E, 0x8C, 0x8D, 0xA7), "Ice Lake/Tiger Lake (client)"),
    **dict.fromkeys((0x6A, 0x6C), "Ice Lake-SP"),
    **dict.fromkeys((0x8F, 0xCF), "Sapphire/Emerald Rapids"),
    **dict.fromkeys((0xAD, 0xAE), "Granite Rapids"),
    **dict.fromkeys((0x97, 0x9A, 0xB7, 0xBA, 0xBF, 0xAA, 0xAC, 0xC5, 0xC6, 0xBD),
                    "Golden Cove/Raptor Cove (client)"),
    # E-core-only Alder Lake-N / Twin Lake (N100, N305; intel-family.h ATOM_GRACEMONT):
    # without it the flags guess (AVX2 = 2 x 256-bit) doubles the peak.
    0xBE: "Gracemont (E-core)",
    # E-core-only Xeons (intel-family.h ATOM_CRESTMONT_X 0xAF Sierra Forest, ATOM_CRESTMONT
    # 0xB6 Grand Ridge); Clearwater Forest (0xDD, Darkmont) is not in the table (see Skymont).
    **dict.fromkeys((0xAF, 0xB6), "Crestmont (E-core)"),
}

# Arm "CPU part" numbers from /proc/cpuinfo (implementer 0x41).
ARM_PARTS: dict[int, str] = {0xD0C: "Neoverse N1", 0xD49: "Neoverse N2",
                              0xD40: "Neoverse V1", 0xD4F: "Neoverse V2"}

NAME_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"apple m[1-4]", "Apple M1-M4 (P-core)"),
    (r"graviton ?4|grace|neoverse[- ]v2", "Neoverse V2"),
    (r"graviton ?3|neoverse[- ]v1", "Neoverse V1"),
    (r"graviton ?2|ampere altra|neoverse[- ]n1", "Neoverse N1"),
    (r"epyc 9[0-9]{2}5|ryzen (?:9|7|5) 9[0-9]{3}", "Zen 5"),
    (r"epyc 9[0-9]{2}4|epyc 8[0-9]{2}4|ryzen (?:9|7|5) 7[0-9]{2}0x?\b", "Zen 4"),
    (r"epyc 7[0-9]{2}3", "Zen 3"),
    (r"epyc 7[0-9]{2}2", "Zen 2"),
    (r"xeon.*(?:6[0-9]{3}p|6[0-9]{3}e?p)\b", "Granite Rapids"),
    # Xeon 6 6700E (Sierra Forest: 6710E ... 6780E) only; a later E-core Xeon with another
    # core must not be taken for Crestmont by its name.
    (r"xeon.*\b67[0-9]{2}e\b", "Crestmont (E-core)"),
    (r"core.*i[3579]-1[2-4][0-9]{3}|core ultra", "Golden Cove/Raptor Cove (client)"),
)

# Fast paths an unknown design may have, by the flags that enable them; used only to
# decide what to measure (their rate is unknown without the pipe count, so 0).
FLAG_PATHS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("int8", "vector", "VNNI dot product", ("avx512_vnni", "avx_vnni")),
    ("bf16", "vector", "AVX512-BF16 dot product", ("avx512_bf16",)),
    ("fp16", "vector", "AVX512-FP16", ("avx512_fp16",)),
    ("bf16", "tensor", "AMX", ("amx_bf16",)),
    ("int8", "tensor", "AMX", ("amx_int8",)),
    ("int8", "vector", "SDOT/UDOT dot product", ("asimddp",)),
    ("fp16", "vector", "NEON fp16 FMA", ("asimdhp",)),
)


# E-cores of Intel hybrid client parts by family-6 model (intel-family.h): Alder Lake
# (0x97, 0x9A) and Raptor Lake (0xB7, 0xBA, 0xBF) pair Golden/Raptor Cove with Gracemont,
# Meteor Lake (0xAA, 0xAC) Redwood Cove with Crestmont, Lunar Lake (0xBD, "Lion Cove /
# Skymont") and Arrow Lake-S (0xC6, INTEL_ARROWLAKE) Lion Cove with Skymont. Every E-core
# is counted at one rate, so a part whose E-cores may be of two designs stays out: Arrow
# Lake-H (0xC5) with its SoC-tile low-power E-cores, Arrow Lake-U (0xB5, no core names in
# intel-family.h), Panther Lake (0xCC, Darkmont: not in the table): None.
INTEL_E_CORES: dict[int, str] = {
    **dict.fromkeys((0x97, 0x9A, 0xB7, 0xBA, 0xBF), "Gracemont (E-core)"),
    **dict.fromkeys((0xAA, 0xAC), "Crestmont (E-core)"),
    **dict.fromkeys((0xBD, 0xC6), "Skymont (E-core)"),
}

