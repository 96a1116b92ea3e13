"""Checking what roofline_data is given: its roofs and kernels as tuples (one of each may
be given bare), or a clear InputError for an argument of the wrong kind."""

from __future__ import annotations

from ..errors import InputError
from ..model.ceiling import Roof
from ..model.kernel import Kernel
from .marker_size import SIZE_BY


def _checked(roofs, kernels, labels, size_by: str, min_share
             ) -> tuple[tuple[Roof, ...], tuple[Kernel, ...]]:
    """roofline_data's roofs and kernels as tuples (one of each may be given bare), or a
    clear InputError for any argument of the wrong kind."""
    given = roofs
    roofs = (roofs,) if isinstance(roofs, Roof) or not hasattr(roofs, "__iter__") else \
        tuple(roofs)
    kernels = ((kernels,) if isinstance(kernels, Kernel) else kernels
               if isinstance(kernels, str) or not hasattr(kernels, "__iter__") else
               tuple(kernels))
    if isinstance(given, str) or not all(isinstance(r, Roof) for r in roofs):
        hint = ("; a profile holds roofs: pass profile.roofs" if hasattr(given, "roofs")
                else "")
        raise InputError(f"plot_roofline(): roofs must be Roofs (rooflab.load_roof('T4') "
                         f"or a profile .json); got {given!r:.80}{hint}")
    if not isinstance(kernels, tuple) or not all(isinstance(k, Kernel) for k in kernels):
        raise InputError(f"plot_roofline(): kernels must be Kernels (rooflab.Kernel(...), "
                         f"rooflab.measure(...) or rooflab.load_kernels(FILE)); got "
                         f"{kernels!r:.80}")
    if not roofs:
        raise InputError("a roofline chart needs at least one roof; pass --on HARDWARE|PROFILE")
    if labels is not None and (isinstance(labels, bool) or not isinstance(labels, int)
                               or labels < 0):
        raise InputError(f"plot_roofline(): labels must be a count of kernels to label, 0 "
                         f"for every one; got {labels!r:.40}")
    if size_by not in SIZE_BY:
        raise InputError(f"size_by {size_by!r:.40}: use one of {', '.join(SIZE_BY)}")
    if min_share is not None and (isinstance(min_share, bool)
                                  or not isinstance(min_share, int | float)
                                  or not 0 <= min_share < 1):
        raise InputError(f"plot_roofline(): min_share must be a fraction of the time in "
                         f"[0, 1) (0.01 for 1 %); got {min_share!r:.40}")
    return roofs, kernels


def chart_subject(kernels) -> str:
    """What a default title names besides the machine: the one input file all the kernels
    came from (meta "file", as the Nsight Compute, rocprof and counter readers record it),
    with the kernel's name when there is one kernel; "" otherwise (a JSON document's
    kernels carry no file: the CLI knows it). Review s18 r5 F9: "Roofline: NVIDIA GeForce
    RTX 4060 Laptop GPU (profiler peaks, derived)" named the machine only, so two charts of
    two runs on one GPU could not be told apart (Nsight and Advisor name the kernel or
    application)."""
    from pathlib import PurePath

    ks = list(kernels)
    files = {str((k.meta or {}).get("file", "")) for k in ks}
    file = PurePath(files.pop()).name if len(files) == 1 and "" not in files else ""
    if file and len({k.name for k in ks}) == 1:
        return f"{ks[0].name} ({file})"
    return file


def titled(subject: str, machine: str) -> str:
    """'Roofline: <subject> on <machine>', or 'Roofline: <machine>' with no subject."""
    return f"Roofline: {subject} on {machine}" if subject else f"Roofline: {machine}"
