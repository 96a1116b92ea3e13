"""`ulimit -v` (RLIMIT_AS): how much address space this process may still map.

Some batch schedulers, CI runners and shared login nodes cap the address space rather than
the memory: every mapping counts, resident or not, so the process's own libraries count in
full. Measured here (Python 3.11, numpy 2, numba 0.68, torch 2.13+cpu): VmSize 16 MiB bare,
138 MiB with numpy, 320 MiB with numba, 539 MiB once numba's pool ran (2 threads), and
torch's import adds 470 MiB more (180 MiB of it resident): far more than the RSS the
probe's sizing allows for. So what is taken is measured (VmSize in /proc/self/status) at
the moment the sizing asks, not guessed, with numba's pool started first: each of its
threads reserves a stack (RLIMIT_STACK, 8 MiB by default) and a malloc arena (glibc's
HEAP_MAX_SIZE, 64 MiB on 64-bit): 72 MiB a thread measured here (146, 219, 363, 651,
1227 MiB for 1, 2, 4, 8, 16 OpenMP threads), 4.6 GiB on a 64-thread machine.
What comes after the sizing (torch's import where the probe measures bf16/fp16/int8:
TORCH_ADDRESS_SPACE, measured) the callers' own headroom must hold.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .os_files import read as _read

STATUS = Path("/proc/self/status")
# VmSize `import torch` (2.13+cpu, Python 3.11) added here: 470 MiB (180 MiB resident)
TORCH_ADDRESS_SPACE = 470 * 2**20


def vm_size(text: str) -> int | None:
    """VmSize (the mapped address space) in bytes from /proc/self/status's text."""
    m = re.search(r"^VmSize:\s+(\d+)\s*kB", text, re.M)
    return int(m.group(1)) * 1024 if m else None


def rlimit_as() -> int | None:
    """The soft RLIMIT_AS in bytes, None where there is none (or no `resource`: Windows)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError, AttributeError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft <= 0 else int(soft)


def start_pool(threads: int | None = None) -> int:
    """Start numba's pool, `threads` of it (None: all NUMBA_NUM_THREADS, what the probe's
    'all' runs; bench --threads 1 would start one), so that VmSize holds what they
    reserve: the only sure way, as numba.get_num_threads() marks the pool launched but
    OpenMP starts its threads at the first parallel loop. Run only under `ulimit -v`
    (the loop compiles once a process, 3 s here: no disk cache, see pool_touch). Returns
    the pool's threads, 0 where numba is not imported (the probe and bench import it
    before sizing)."""
    numba = sys.modules.get("numba")
    if numba is None:
        return 0
    from .pool_touch import touch

    n = int(numba.config.NUMBA_NUM_THREADS)
    n = max(1, min(n, threads)) if threads else n
    old = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        touch(64 * n)
    finally:
        numba.set_num_threads(old)
    return n


def address_space(status: Path = STATUS, soft=..., pool=start_pool,
                  threads: int | None = None) -> tuple[int, int, str] | None:
    """(limit, taken, source) under `ulimit -v`: the soft RLIMIT_AS and what is mapped
    (VmSize) once numba's pool runs `threads` (`pool`: starts it, returns its threads);
    None where no cap is set or VmSize is unreadable. soft: ... reads this process's."""
    soft = rlimit_as() if soft is ... else soft
    if not soft:
        return None
    threads = pool(threads)
    mapped = vm_size(_read(status))
    if mapped is None:
        return None
    with_pool = (f", numba's pool of {threads} thread{'s' if threads != 1 else ''} "
                 f"started" if threads else "")
    return soft, mapped, f"RLIMIT_AS; VmSize in {status}{with_pool}"
