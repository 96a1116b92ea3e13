"""The CPU's marketing name, where the OS hides it too.

/proc/cpuinfo's `model name` first. gVisor (Cloud Run, GKE Sandbox, Modal) writes
"model name : unknown" there, and lscpu, which reads the same file, repeats it; a
placeholder is no name, so the next sources are tried: lscpu, the kernel's CPU modalias
(/sys/devices/system/cpu/modalias: "cpu:type:x86,ven0002fam001Amod0002:feature:...", the
vendor and CPUID family/model, as cpuinfo's own lines give them under gVisor), then
platform.processor() where it says more than the architecture: "Intel CPU, family 0x6 model
0x55 (the sandbox hides its name)", else "unknown CPU (the sandbox hides it)", not a bare
"unknown" that reads as a CPU called that (s26 fC).
"""

from __future__ import annotations

import platform
import re
from pathlib import Path

from .os_files import read as _read

MODALIAS = Path("/sys/devices/system/cpu/modalias")
HIDDEN = "unknown CPU (the sandbox hides it)"
# what cpuinfo or lscpu print for a name they do not have
PLACEHOLDERS = ("", "unknown", "-", "n/a", "none", "generic", "0")
# platform.processor() answers that name an architecture, not a CPU
ARCH_WORDS = ("x86_64", "amd64", "i386", "i686", "aarch64", "arm64", "arm", "armv7l",
              "ppc64le", "s390x", "riscv64")
# the kernel's X86_VENDOR_* numbers (arch/x86/include/asm/processor.h) in the modalias
X86_VENDORS = {0: "Intel", 2: "AMD", 3: "UMC", 5: "Centaur", 8: "Transmeta", 9: "NSC",
               10: "Hygon", 11: "Zhaoxin", 12: "Vortex"}


def is_placeholder(name: str | None) -> bool:
    return (name or "").strip().lower() in PLACEHOLDERS


def parse_modalias(text: str) -> tuple[str, int, int] | None:
    """(vendor, family, model) from an x86 CPU modalias, None for any other."""
    m = re.match(r"cpu:type:x86,ven([0-9A-Fa-f]{4})fam([0-9A-Fa-f]{4})mod([0-9A-Fa-f]{4})",
                 text.strip())
    if not m:
        return None
    ven = int(m.group(1), 16)
    return X86_VENDORS.get(ven, f"vendor {ven}"), int(m.group(2), 16), int(m.group(3), 16)


def hidden_name(vendor: str, family: int, model: int) -> str:
    """'Intel CPU, family 0x6 model 0x55 (the sandbox hides its name)'."""
    vendor = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD", "HygonGenuine": "Hygon"}.get(
        vendor, vendor or "unknown")
    return f"{vendor} CPU, family {family:#x} model {model:#x} (the sandbox hides its name)"


def cpu_name(cpuinfo_name: str | None, lscpu_name=lambda: None,
             modalias: Path | None = None, processor: str | None = None,
             ident: tuple[str, int | None, int | None] | None = None) -> str | None:
    """The first real name of: cpuinfo's, lscpu's (a callable: run only when needed);
    where one said a placeholder such as gVisor's "unknown", the vendor, family and model
    (`ident`, cpuinfo's, else the modalias's); then platform.processor()'s. None where no
    source had any answer at all (the caller's own fallbacks: sysctl, the machine); HIDDEN
    where a name was hidden and nothing else says more."""
    hidden = cpuinfo_name is not None and is_placeholder(cpuinfo_name)
    if not is_placeholder(cpuinfo_name):
        return cpuinfo_name.strip()
    lscpu = lscpu_name()
    if not is_placeholder(lscpu):
        return lscpu.strip()
    hidden = hidden or lscpu is not None
    # the modalias only where a name was hidden: elsewhere (Arm, macOS, Windows, tests
    # that fake them) this machine's x86 modalias would name another CPU
    if hidden and ident and ident[1] is not None and ident[2] is not None:
        return hidden_name(*ident)
    alias = parse_modalias(_read(modalias or MODALIAS)) if hidden else None
    if alias:
        return hidden_name(*alias)
    proc = platform.processor() if processor is None else processor
    if proc and not is_placeholder(proc) and proc.strip().lower() not in ARCH_WORDS:
        return proc.strip()
    return HIDDEN if hidden else None
