"""`rooflab bench --run script.py`: run a user's script and keep the kernels it measured.

The script runs as `rooflab torch --run` runs one (bench.script_run): in this process,
as `__main__`, with `sys.argv = [script, *args]` and its folder first on `sys.path`; here inside
`rooflab.measuring.collect()`, which records every Kernel its `rooflab.measure` calls make
(a benchmark's Kernel, a `with` block's `.kernel`, a decorated function's calls as one
aggregated kernel). An exception in the script is the script's: reported with its type,
message, and the traceback frames of the script's own files (rooflab's and the libraries'
frames left out).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InputError
from ..model.kernel import Kernel
from .script_run import check_script, run_as_main

HOW_TO_MARK = ("mark a kernel with rooflab.measure(fn, *args, flop=..., bytes=...), "
               "`with rooflab.measure(name=..., flop=..., bytes=...):` or "
               "@rooflab.measure(name=...) (examples/my_kernels.py shows all three)")


def run_script(script: str, args: Sequence[str] = (), *,
               quiet_stdout: bool = False) -> tuple[Kernel, ...]:
    """Run `script` once and return the kernels its rooflab.measure calls produced.

    quiet_stdout: send the script's prints to stderr (so `--json` output stays clean).
    InputError for a missing script or one that measured nothing; ProbeError (with the
    script's traceback) when the script raises or exits with a non-zero status.
    """
    from ..measure_collect import collect

    check_script(script)
    with collect() as found:
        exited = run_as_main(script, args, quiet_stdout=quiet_stdout)
    if not len(found) and exited:   # e.g. `-- --help`: argparse printed the help and left
        raise InputError(f"--run {script}: the script exited (status 0) before it measured "
                         f"a kernel; nothing to analyse")
    if not len(found):
        raise InputError(f"--run {script}: the script measured no kernel; {HOW_TO_MARK}")
    return unique_names(found.kernels)


def unique_names(kernels: Sequence[Kernel]) -> tuple[Kernel, ...]:
    """Kernels sharing a name get '#2', '#3', ... after the first: the analysis and the
    table key points by name, so two `measure(np.add, ...)` would otherwise be one row."""
    seen: dict[str, int] = {}
    out = []
    for k in kernels:
        seen[k.name] = seen.get(k.name, 0) + 1
        out.append(k if seen[k.name] == 1 else k.with_(name=f"{k.name}#{seen[k.name]}"))
    return tuple(out)


def kernels_device(kernels: Sequence[Kernel]) -> tuple[str, str]:
    """(the device to probe, a warning or ''): the CUDA device when every kernel ran on
    one, else the CPU; kernels on several devices cannot all be judged by one roof."""
    devices = list(dict.fromkeys(str(k.meta.get("device") or "cpu") for k in kernels))
    cuda = [d for d in devices if d.startswith("cuda")]
    if len(devices) == 1:
        return devices[0] if cuda else "cpu", ""
    target = "cpu" if len(cuda) < len(devices) else cuda[0]
    return target, (f"warning: the kernels ran on {', '.join(devices)}; all are judged by "
                    f"the roof of {target}: run each device's kernels separately or give "
                    f"--on for the device that matters")
