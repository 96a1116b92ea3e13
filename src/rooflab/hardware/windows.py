"""Host facts on Windows, where there is no /proc/cpuinfo: the registry has the CPU's name,
vendor and CPUID family/model. winreg is in Windows' standard library; elsewhere nothing is
read (windows_cpu() returns {})."""

from __future__ import annotations

import re

# HKEY_LOCAL_MACHINE: the first logical processor's description, as Windows fills it from
# CPUID at boot (Microsoft's registry layout; the key CPU-Z and psutil users read too).
WINDOWS_CPU_KEY = r"HARDWARE\DESCRIPTION\System\CentralProcessor\0"


def windows_cpu_fields(name: str, vendor: str, identifier: str) -> dict[str, str]:
    """cpuinfo-like fields from the registry values: ProcessorNameString ("Intel(R) Xeon(R)
    6780E", padded with spaces on some CPUs), VendorIdentifier ("GenuineIntel") and
    Identifier ("Intel64 Family 6 Model 175 Stepping 3", decimal: the family and model
    cpu_arch looks x86 designs up by; an Arm Identifier, "ARMv8 (64-bit) Family 8 Model
    D4B ...", names no CPUID family and is not taken)."""
    out: dict[str, str] = {}
    if name.strip():
        out["model name"] = " ".join(name.split())
    if vendor.strip():
        out["vendor_id"] = vendor.strip()
    m = re.match(r"\s*(?:Intel64|AMD64|EM64T|x86)\b.*?\bFamily (\d+) Model (\d+)\b", identifier)
    if m:
        out["cpu family"], out["model"] = m.group(1), m.group(2)
    return out


def windows_cpu() -> dict[str, str]:
    """The CPU's name, vendor, family and model on Windows from the registry (winreg, in
    the standard library there); {} elsewhere or when the key cannot be read. On Windows
    platform.processor() gives only the Identifier ("Intel64 Family 6 Model 175 ..."),
    never the name."""
    try:
        import winreg
    except ImportError:
        return {}
    try:
        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, WINDOWS_CPU_KEY) as key:
            def value(name: str) -> str:
                try:
                    return str(winreg.QueryValueEx(key, name)[0])
                except OSError:
                    return ""

            return windows_cpu_fields(value("ProcessorNameString"),
                                      value("VendorIdentifier"), value("Identifier"))
    except OSError:
        return {}
