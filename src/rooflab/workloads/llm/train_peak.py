"""The note on MFU's peak in a training step (train.run_train), split from train.py (its
line budget): where the matmuls fell back to a slower ceiling the peak did too, said once."""

from __future__ import annotations


def with_peak(notes: tuple[str, ...], peak_note: str) -> tuple[str, ...]:
    """The kernels' stand-in notes and the MFU peak's, said once: where the matmuls fell
    back to the same ceiling ("has no bf16 ceiling; using fp32 vector ... (for q_proj,
    ...)") their note names the peak too, else the peak's note stands alone."""
    if not peak_note:
        return notes
    head = f"{peak_note} (for "
    if any(n.startswith(head) for n in notes):
        return tuple(n[:-1] + "; and MFU's peak)" if n.startswith(head) else n
                     for n in notes)
    return notes + (f"{peak_note} (MFU's peak)",)
