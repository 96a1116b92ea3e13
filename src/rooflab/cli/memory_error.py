"""The `error:` line for a MemoryError: what ran out of memory, and what to do about it.

Not a bug of rooflab's either way (review s22 r1 F4), but two different troubles:
- an input too large to analyse (a trace, a profiler export): split it, named where one
  was being read (files_decode.LAST_READ; review s22 h1 H3);
- a measurement's working set (`probe`, `demo`, `bench`) that does not fit the memory this
  process may use: under `ulimit -v` (an address-space cap: some batch schedulers and CI),
  a container's memory limit, or a busy machine. That said "the input is too large ...
  split it (fewer kernels or files a run)" and named the --on profile read before the
  kernel ran, advice no one could follow (review s24 r2 F2, F8): now it says whose working
  set it was, the cap where one is set, and a smaller --size, a higher limit or more memory.
Which of the two is told by where the MemoryError was raised: the innermost of rooflab's
frames that reads a file or measures.
"""

from __future__ import annotations

from ..errors import InputError

# verbs that measure this machine: no input of theirs is "too large"
MEASURING = ("probe", "demo", "bench")
# modules whose frames read an input, and those that measure (probe: the machine's roofs;
# bench: a kernel's own working set, the zoo's or `--kernel`'s)
_READING = ("rooflab.files", "rooflab.files_decode", "rooflab.files_gzip", "rooflab.files_kind",
            "rooflab.ingest", "rooflab.hardware.profile", "rooflab.cli.file_args")
_PROBE = ("rooflab.probe", "rooflab.measuring", "rooflab.measure_")
_KERNEL = ("rooflab.bench",)

_RAISE = ("raise `ulimit -v` or the container's memory limit (docker --memory, a pod's "
          "limits.memory, a job's --mem), free memory, or run on a machine with more memory")


def out_of_memory(argv: list[str], exc: BaseException) -> InputError:
    """The InputError main() says for `exc`, raised running the command line `argv`."""
    where = _where(exc)
    verb = _verb(argv)
    if where == "reading" or verb not in MEASURING:
        return InputError(_input_too_large())
    cap = _address_space_cap()
    fits = (f"the memory this process may use ({cap})" if cap
            else "the memory this process may use")
    if where == "kernel" and _option(argv, "--kernel") is not None:
        size = _option(argv, "--size")
        threads = _option(argv, "--threads") or "1"   # bench's default: one thread
        per = f"--size {size}" if size else "the default --size, 4x the last-level cache,"
        one = threads.strip() == "1"
        many = f"{threads} thread{'' if one else 's'}"
        # half the size that failed, in its own syntax (the default's is 4xLLC: the advice
        # said "e.g. 4xLLC", the size it had just failed with, review s24 h2 F3); fewer
        # threads only where there are some to drop
        half = _half(size or "4xLLC")
        smaller = f"a smaller --size (half: --size {half})" if half else "a smaller --size"
        return InputError(f"out of memory running the kernel: its working set ({per} per "
                          f"thread x {many}) does not fit in {fits}; give {smaller}"
                          f"{'' if one else ' or fewer --threads'}, or {_RAISE}")
    if where == "kernel":
        return InputError(f"out of memory timing the reference kernels: their arrays do not "
                          f"fit in {fits}; {_RAISE}")
    if where == "probe":
        smaller = ("leave out --full (its working set is a third larger), or "
                   if "--full" in argv else "")
        return InputError(f"out of memory measuring this machine: the probe's working set "
                          f"(its DRAM arrays, several times the last-level cache) does not "
                          f"fit in {fits}; {smaller}{_RAISE}")
    return InputError(f"out of memory running `rooflab {verb}`: it does not fit in {fits}; "
                      f"{_RAISE}")


# the units a --size may end in (kernel_runner.UNITS) that have a smaller one 1024 or 1000
# times smaller: half of 1GiB is said 512MiB, not 0.5GiB
_SMALLER = {"gib": "MiB", "mib": "KiB", "g": "M", "m": "K", "gb": "MB", "mb": "kB"}


def _half(size: str) -> str | None:
    """Half of a --size in its own syntax ('64MiB' -> '32MiB', '4xLLC' -> '2xLLC', '1GiB' ->
    '512MiB', '1xLLC' -> '0.5xLLC'); None where it is not one kernel_runner.parse_size takes."""
    import re

    m = re.fullmatch(r"(\d+(?:\.\d+)?)(x?)([a-z]*)", size.strip().replace(" ", ""), re.I)
    if not m or float(m.group(1)) <= 0:
        return None
    value, unit = float(m.group(1)) / 2, m.group(3)
    if not m.group(2) and value < 1 and unit.lower() in _SMALLER:
        factor = 1000 if unit.lower().endswith("b") and "i" not in unit.lower() else 1024
        value, unit = value * factor, _SMALLER[unit.lower()]
    return f"{value:g}{m.group(2)}{unit}"


def _input_too_large() -> str:
    from ..files_decode import LAST_READ
    from ..report.term_text import visible

    name = f" (the input read last: {visible(LAST_READ[0], inline=True)})" \
        if LAST_READ[0] else ""
    return (f"out of memory{name}: the input is too large to analyse in this machine's "
            f"memory; split it (fewer kernels or files a run) or run on a machine with more "
            f"memory")


def _where(exc: BaseException) -> str | None:
    """'reading' where the innermost of rooflab's frames that reads or measures reads an
    input; else 'kernel' where a kernel of rooflab.bench runs (its arrays are made by the
    probe's code, rooflab.probe.cpu.bandwidth), 'probe' where the probe measures; None
    where no such frame was running."""
    last, kernel = None, False
    tb = exc.__traceback__
    while tb is not None:
        name = str(tb.tb_frame.f_globals.get("__name__", ""))
        if _in(name, _READING):
            last = "reading"
        elif _in(name, _KERNEL) or _in(name, _PROBE):
            last = "measuring"
            kernel = kernel or _in(name, _KERNEL)
        tb = tb.tb_next
    if last == "measuring":
        return "kernel" if kernel else "probe"
    return last


def _in(module: str, prefixes: tuple[str, ...]) -> bool:
    """Whether `module` is one of `prefixes` or inside one (a prefix ending in _ names
    the modules that start so: rooflab.measure_runs)."""
    return any(module == p or module.startswith(p if p.endswith("_") else p + ".")
               for p in prefixes)


def _verb(argv: list[str]) -> str | None:
    """The verb of a command line: its first word that is not an option (the root's options,
    -q and --version, take no value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def _option(argv: list[str], name: str) -> str | None:
    """The value given to option `name` (`--size 2GiB` or `--size=2GiB`), the last one."""
    value = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(name + "="):
            value = arg.partition("=")[2]
    return value


def _address_space_cap() -> str | None:
    """'`ulimit -v`: 1.17 GiB' where the process's address space is capped, else None."""
    try:
        import resource
    except ImportError:   # Windows
        return None
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError, AttributeError):
        return None
    if soft in (resource.RLIM_INFINITY, -1) or soft <= 0:
        return None
    from ..units import fmt_bytes_binary

    return f"`ulimit -v`: {fmt_bytes_binary(soft)} of address space"
