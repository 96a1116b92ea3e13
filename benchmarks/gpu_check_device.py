"""gpu_check.py's records of this process's hold on the device: the Triton kernels'
registers and spills, and the device memory it lets go of before the CLI runs. Split out of
gpu_check.py (module size); rooflab's GPU modules are imported lazily, as before."""

from __future__ import annotations


def kernel_resources(dev) -> dict | None:
    """Registers and spills of the Triton kernels compiled in this process, with Triton's
    version (CUDA only: the interpreter compiles nothing)."""
    if dev.type != "cuda":
        return None
    try:
        from rooflab.probe.gpu.kernels import resources

        return resources()
    except Exception as exc:  # noqa: BLE001 — a record, never a failure
        return {"error": f"{type(exc).__name__}: {exc}"}


def release_device(torch, dev) -> dict | None:
    """Before the CLI runs (review 14a #9): drop this process's cached device memory, and
    name its pid to the child (EXPECTED_PIDS_ENV), which then lists it as expected rather
    than as another user of the GPU. Returns what this process still holds (CUDA only)."""
    import gc
    import os

    from rooflab.probe.gpu.load import EXPECTED_PIDS_ENV

    if dev.type != "cuda":
        return None
    gc.collect()
    torch.cuda.empty_cache()
    pids = [w for w in os.environ.get(EXPECTED_PIDS_ENV, "").split(",") if w]
    os.environ[EXPECTED_PIDS_ENV] = ",".join([*pids, str(os.getpid())])
    return {"pid": os.getpid(), "reserved_bytes": float(torch.cuda.memory_reserved(dev)),
            "env": EXPECTED_PIDS_ENV}
