"""Latency and bandwidth of a collective: least-squares fit of t = alpha + S / beta.

The fit minimises the *relative* residuals (each point weighted by 1/t): an ordinary fit
of absolute times is decided by the largest messages alone and leaves alpha as noise,
while relative weighting lets the small messages fix alpha and the large ones beta
(Hockney's model, "The communication challenge for MPP", Parallel Computing 20, 1994).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import InputError
from ...units import fmt_fraction


@dataclass(frozen=True)
class AlphaBeta:
    """t(S) = alpha_s + S / beta_bytes_per_s, fitted on `points` message sizes."""

    alpha_s: float
    beta_bytes_per_s: float
    points: int
    max_rel_residual: float     # worst |t_fit - t| / t over the points
    note: str = ""

    def seconds(self, nbytes: float) -> float:
        return self.alpha_s + nbytes / self.beta_bytes_per_s

    @property
    def half_bytes(self) -> float:
        """n_1/2: the message size that reaches half of beta (alpha x beta)."""
        return self.alpha_s * self.beta_bytes_per_s

    def to_dict(self) -> dict:
        return {"alpha_s": self.alpha_s, "beta_bytes_per_s": self.beta_bytes_per_s,
                "points": self.points, "max_rel_residual": self.max_rel_residual,
                "half_bytes": self.half_bytes, "note": self.note}


def _solve(xs: Sequence[float], ts: Sequence[float], with_alpha: bool) -> tuple[float, float]:
    """Weighted least squares for (alpha, 1/beta); rows divided by t (relative error)."""
    import numpy as np

    x = np.asarray(xs, dtype=float)
    t = np.asarray(ts, dtype=float)
    cols = [np.ones_like(x) / t, x / t] if with_alpha else [x / t]
    a = np.stack(cols, axis=1)
    coef, *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    return (float(coef[0]), float(coef[1])) if with_alpha else (0.0, float(coef[0]))


def fit_alpha_beta(nbytes: Sequence[float], seconds: Sequence[float]) -> AlphaBeta:
    """Fit t = alpha + S/beta to (size, time) points; needs two sizes or more.

    When the best fit has a negative alpha (the small messages ran faster than the line
    through the large ones predicts), alpha is pinned at 0 and beta refitted; the note
    says so."""
    if len(nbytes) != len(seconds):
        raise InputError("fit_alpha_beta: sizes and times differ in length")
    pts = [(float(s), float(t)) for s, t in zip(nbytes, seconds, strict=True)]
    if any(s <= 0 or t <= 0 for s, t in pts):
        raise InputError("fit_alpha_beta: sizes and times must be > 0")
    if len({s for s, _ in pts}) < 2:
        raise InputError(f"fit_alpha_beta: need at least two message sizes; got "
                         f"{len({s for s, _ in pts})}")
    xs, ts = [p[0] for p in pts], [p[1] for p in pts]
    alpha, inv_beta = _solve(xs, ts, True)
    note = ""
    if alpha < 0:
        alpha, inv_beta = _solve(xs, ts, False)
        note = "alpha fitted below 0; pinned at 0 and beta refitted"
    if not inv_beta > 0:
        raise InputError("fit_alpha_beta: time does not grow with message size; cannot fit "
                         "a bandwidth (measure larger messages)")
    fit = AlphaBeta(alpha, 1.0 / inv_beta, len(pts), 0.0, note)
    worst = max(abs(fit.seconds(s) - t) / t for s, t in pts)
    return AlphaBeta(alpha, 1.0 / inv_beta, len(pts), worst, note)


def misfit_notes(collectives: Sequence[dict]) -> list[str]:
    """The note naming the fits that miss their own median times past RESIDUAL_WARN (the
    probe table's `resid !`), from extras.comm.collectives entries; [] when none does.
    One text for the table's notes and the profile's measured.notes, so a --json run (and
    a script reading the file) gets it too (review s20 r3 F8)."""
    from ...model.link_fits import RESIDUAL_WARN

    bad = [f"{c['label']} {fmt_fraction(c['fit']['max_rel_residual'])}" for c in collectives
           if c.get("fit") and (c["fit"].get("max_rel_residual") or 0) > RESIDUAL_WARN]
    if not bad:
        return []
    return [f"alpha/beta fits that miss their own median times by more than "
            f"{fmt_fraction(RESIDUAL_WARN)} at some size (resid !): {', '.join(bad)}; their alpha "
            f"and beta describe no measured point well (a loaded host, or a latency that is not "
            f"one constant); rerun on a quiet host or with --full before using them"]
