"""Kernels from a CPU counter tool's files (likwid-perfctr, perf stat): each region or run
one Kernel, several files steps of one trajectory, longest first."""

from __future__ import annotations

from ..errors import ParseError
from ..model.kernel import Kernel
from ..model.provenance import COUNTED, MEASURED
from .kernel_names import step_labels
from .profile_import import ProfileImport, held_notes
from .skips import FileRead, Skip


def file_steps(paths: list[str]) -> list[tuple[str | None, int | None]]:
    """(step label, step index) of each file: several files are steps, one is none."""
    if len(paths) < 2:
        return [(None, None)] * len(paths)
    return [(label, i) for i, label in enumerate(step_labels(paths))]


def counter_kernel(source: str, name: str, fields: dict, notes: list[str], path: str,
                   step: tuple[str | None, int | None], extra: dict | None = None) -> Kernel:
    """One region's or run's Kernel: FLOP and bytes counted (hardware counters: retired
    FP instructions, the memory controllers' CAS counts), time measured (a clock); `extra`:
    the tool's own meta, before the notes."""
    label, index = step
    meta = {"source": source, "full_name": name, "file": path, "line": fields["line"],
            "device": "cpu", **(extra or {}), "notes": notes}
    if fields.get("sockets"):
        meta["sockets"] = fields["sockets"]
    if label is not None:
        meta["step"], meta["step_index"] = label, index
    return Kernel(name=name if label is None else f"{name} [{label}]", flop=fields["flop"],
                  bytes=fields["bytes"], seconds=fields["seconds"],
                  calls=fields.get("calls", 1),
                  provenance={"flop": COUNTED, "bytes": COUNTED, "seconds": MEASURED},
                  unit="vector" if fields["flop"] else None, meta=meta)


def counter_import(kernels: list[Kernel], done: list[FileRead], failed: list[Skip],
                   what: str, devices: tuple[str, ...] = ()) -> ProfileImport:
    """The files' kernels, longest first, with what was skipped; ParseError when no file
    has a usable `what` (region, run)."""
    if not kernels:
        raise ParseError(f"no file has a usable {what}: " + "; ".join(str(s) for s in failed))
    kernels.sort(key=lambda k: -(k.seconds or 0.0))
    return ProfileImport(kernels=tuple(kernels),
                         skips=tuple(s for f in done for s in f.skips), failed=tuple(failed),
                         devices=devices, files=tuple(f.path for f in done),
                         notes=held_notes(kernels))
