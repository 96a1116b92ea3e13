"""Which core design a CPU has, from CPUID-like data (/proc/cpuinfo fields, a model name).

Family/model (or the Arm part number) pick an entry of `cpu_arch`'s tables, the model name
when they are missing; the flags then decide the usable SIMD width and fast paths. A design
the tables do not know gets no guessed FMA pipe count (`_generic`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from .cpu_arch import (
    AMD_MODELS,
    AMD_ZEN6_MODELS,
    ARCHS,
    ARM_PARTS,
    FLAG_PATHS,
    INTEL_E_CORES,
    INTEL_MODELS,
    NAME_PATTERNS,
    FastPath,
    MicroArch,
)


def _norm_vendor(vendor: str, model_name: str) -> str:
    v = f"{vendor} {model_name}".lower()
    if "apple" in v:
        return "Apple"
    if "amd" in v or "authenticamd" in v:
        return "AMD"
    if "intel" in v or "genuineintel" in v:
        return "Intel"
    if "arm" in v or "0x41" in v or "neoverse" in v or "graviton" in v:
        return "ARM"
    return vendor


def _xeon_generation(model_name: str) -> str | None:
    """Xeon Scalable number -> generation: 4-digit number, second digit is the generation."""
    m = re.search(r"(platinum|gold|silver|bronze) ([0-9])([0-9])([0-9]{2})([a-z]*)",
                  model_name.lower())
    if not m:
        return None
    tier, gen = m.group(1), int(m.group(3))
    if gen == 3 and m.group(5).startswith("h"):
        return "Cooper Lake"  # 8380H, 6328HL, 5320H: 3rd gen but not Ice Lake
    if gen in (1, 2):
        # Gold 5122 and 5222 are the Gold 5 parts with two FMA units (Intel ARK "# of
        # AVX-512 FMA Units: 2" on both SKU pages).
        one_fma = tier in ("silver", "bronze") or (tier == "gold" and m.group(2) == "5"
                                                     and m.group(4) != "22")
        return "Skylake-SP/Cascade Lake (1 FMA unit)" if one_fma else "Skylake-SP/Cascade Lake"
    return {3: "Ice Lake-SP", 4: "Sapphire/Emerald Rapids",
            5: "Sapphire/Emerald Rapids"}.get(gen)


def _by_table(vendor: str, family: int | None, model: int | None,
              model_name: str) -> tuple[str | None, str]:
    """(arch name, how it was found) from family/model, else from the model name."""
    if vendor == "AMD" and family is not None and model is not None:
        for fam, lo, hi, name in AMD_MODELS:
            if fam == family and lo <= model <= hi:
                return name, f"AMD family {family:#x} model {model:#x}"
        if family >= 0x1A:
            # a model of a family the table covers only in part (Zen 6 in 0x1a), or a
            # newer family: its name ("Ryzen 9 ...") must not pick a Zen 5 entry
            return None, ""
    if vendor == "Intel" and family == 6 and model is not None and model in INTEL_MODELS:
        name = INTEL_MODELS[model]
        if model == 0x55:
            name = _xeon_generation(model_name) or name
            name = "Cooper Lake" if name == "Ice Lake-SP" else name  # 3rd gen on model 0x55
        return name, f"Intel family 6 model {model:#x}"
    if vendor == "ARM" and model is not None and model in ARM_PARTS:
        return ARM_PARTS[model], f"Arm CPU part {model:#x}"
    low = model_name.lower().strip()
    xeon = _xeon_generation(model_name)
    if xeon:
        return xeon, f"model name '{model_name}'"
    for pattern, name in NAME_PATTERNS:
        if re.search(pattern, low):
            return name, f"model name '{model_name}'"
    return None, ""


def _generic(vendor: str, flags: frozenset[str], family: int | None = None,
             model: int | None = None) -> MicroArch | None:
    """An unknown design: the flags give the vector width, but not the number of FMA
    pipes (1 to 4 across current cores: Sierra Forest's Crestmont E-cores run AVX2 on
    two 128-bit pipes, Golden Cove on two 256-bit, Neoverse V2 on four 128-bit), so
    guessing one could put the nominal peak 2x off. It gets `fma_pipes=0`: no nominal
    compute ceilings, and a note that says how to get one."""
    if not flags:
        return None
    if "avx512f" in flags:
        label, bits = "AVX-512", 512
    elif "avx2" in flags and "fma" in flags:
        label, bits = "AVX2", 256
    elif "asimd" in flags or "neon" in flags:
        label, bits = "NEON", 128
    elif "sse2" in flags:
        label, bits = "SSE2", 128
    else:
        return None
    ident = " ".join(x for x in (vendor, f"family {family:#x}" if family is not None else "",
                                 f"model {model:#x}" if model is not None else "") if x)
    note = (f"microarchitecture not in rooflab's table ({ident or 'unidentified CPU'}): "
            f"the flags show {label} ({bits}-bit vectors) but not how many FMA pipes a core "
            f"has, so there is no nominal compute peak (guessing could be 2x off); the "
            f"measured ceilings stand. To get one, add the design to "
            f"rooflab/hardware/cpu_arch.py (ARCHS and the model table) or compare with a "
            f"catalog CPU (--on NAME)")
    paths = tuple(FastPath(prec, unit, 0.0, via, fl) for prec, unit, via, fl in FLAG_PATHS
                  if flags & set(fl))
    return MicroArch(f"unknown {label} design", vendor, bits, 0, fast_paths=paths,
                     notes=(note,))


def _reconcile(arch: MicroArch, flags: frozenset[str], vendor: str) -> MicroArch:
    """Prefer the flags for the SIMD width when they disagree with the family/model table."""
    if not flags or vendor not in ("AMD", "Intel"):
        return arch
    notes = list(arch.notes)
    simd, isa = arch.simd_bits, arch.vector_isa_bits
    if isa >= 512 and "avx512f" not in flags:
        simd, isa = min(simd, 256), 256
        notes.append(f"{arch.name} has AVX-512 but the flags lack avx512f (masked by the VM "
                     "or BIOS); using the AVX2 width the flags allow")
    if isa >= 256 and not ("avx2" in flags and "fma" in flags):
        simd, isa = 128, 128
        notes.append(f"{arch.name} has AVX2/FMA but the flags lack them; using 128-bit SSE")
    if isa < 512 and "avx512f" in flags:
        # the flag says the ISA is there, not how many 512-bit FMA units run it (Zen 4
        # splits each into two 256-bit halves): the table's FLOP/cycle stands
        isa = 512
        notes.append(f"flags show avx512f but {arch.name} is listed with {arch.vector_isa_bits}"
                     f"-bit FMA datapaths; the nominal keeps {arch.simd_bits}-bit x "
                     f"{arch.fma_pipes} pipes (AVX-512 does not say how many 512-bit FMA "
                     f"units a core has; measure to confirm)")
    paths = tuple(p for p in arch.fast_paths if not p.flags or flags & set(p.flags))
    if len(paths) < len(arch.fast_paths):
        gone = sorted({f"{p.precision} {p.via}" for p in arch.fast_paths} -
                      {f"{p.precision} {p.via}" for p in paths})
        notes.append("flags lack " + ", ".join(gone))
    return replace(arch, simd_bits=simd, isa_bits=isa, fast_paths=paths, notes=tuple(notes))


def detect_microarch(vendor: str, family: int | None, model: int | None,
                     flags: frozenset[str], model_name: str) -> MicroArch | None:
    """The core design from CPUID-like data (/proc/cpuinfo fields), or None if unknown.

    Family/model pick the table entry (the model name when they are missing); the flags
    then decide the usable SIMD width and fast paths, with a note when they disagree.
    A VM may mask the model: a Zen 5 host shown as family 0x19 model 0x11 is reported as
    Zen 4, and only a measurement can tell.
    """
    flags = frozenset(f.lower() for f in flags)
    vendor = _norm_vendor(vendor, model_name)
    name, how = _by_table(vendor, family, model, model_name or "")
    if name is None:
        arch = _generic(vendor, flags, family, model)
        zen6 = (vendor == "AMD" and family == 0x1A and model is not None
                and any(lo <= model <= hi for lo, hi in AMD_ZEN6_MODELS))
        if arch is not None and zen6:
            arch = replace(arch, notes=arch.notes + (
                f"AMD family 0x1a model {model:#x} is Zen 6 (Linux arch/x86/kernel/cpu/amd.c "
                f"marks models 0x50-0x5f, 0x80-0xaf and 0xc0-0xef X86_FEATURE_ZEN6), whose FMA "
                f"pipe count AMD has not published: no nominal compute peak, not Zen 5's",))
        return arch
    name, how = _amx_overrules(vendor, name, how, flags)
    arch = ARCHS[name]
    arch = replace(arch, notes=arch.notes + (f"identified as {arch.name} from {how}",))
    return _reconcile(arch, flags, vendor)


def _amx_overrules(vendor: str, name: str, how: str,
                   flags: frozenset[str]) -> tuple[str, str]:
    """AMX (flag amx_tile) exists only on Xeons from Sapphire Rapids on, so a model whose
    design has none is a VM's mask: seen on 2026-12-03, a Xeon with AMX and AVX512-FP16
    shown as family 6 model 0xa7 (Rocket Lake, a client part with one 512-bit FMA pipe),
    which halved the nominal fp64 peak (measured 191 % of it) and left bf16 unmeasured.
    The server design is taken from the flags: amx_fp16 from Granite Rapids on."""
    if vendor != "Intel" or "amx_tile" not in flags or any(
            p.via == "AMX" for p in ARCHS[name].fast_paths):
        return name, how
    server = "Granite Rapids" if "amx_fp16" in flags else "Sapphire/Emerald Rapids"
    return server, (f"the flags: amx_tile{', amx_fp16' if 'amx_fp16' in flags else ''} "
                    f"(AMX: Xeon from Sapphire Rapids on), overruling {how}, which names "
                    f"{name}, a design without AMX (a VM can mask the model)")


def e_core_arch(vendor: str, family: int | None, model: int | None,
                flags: frozenset[str] = frozenset()) -> MicroArch | None:
    """The E-core design of a hybrid CPU, None when the table does not know it."""
    if _norm_vendor(vendor, "") != "Intel" or family != 6 or model not in INTEL_E_CORES:
        return None
    arch = ARCHS[INTEL_E_CORES[model]]
    return _reconcile(arch, frozenset(f.lower() for f in flags), "Intel") if flags else arch
