"""`rooflab probe --comm`: run the communication probe, print the collective table, save
the cluster profile. Called by cli/probe.py (which owns the `probe` verb)."""

from __future__ import annotations

from pathlib import Path

from ...errors import InputError
from ...units import si

DEFAULT_OUTPUT = "rooflab-comm-profile.json"


def _bytes(n: float) -> str:
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:g} {unit}"
    return f"{n:g} B"


def summary_rows(profile) -> list[list[str]]:
    """One row per collective: sizes, alpha, beta, peak bus bandwidth, notes."""
    rows = []
    for c in profile.extras["comm"]["collectives"]:
        fit, pts = c["fit"], c["rows"]
        peak = max(pts, key=lambda r: r["busbw_bytes_per_s"])
        rows.append([
            c["label"], str(2 if c["pair"] else c["ranks"]),
            f"{_bytes(pts[0]['bytes'])}..{_bytes(pts[-1]['bytes'])} ({len(pts)})",
            si(fit["alpha_s"], "s") if fit else "-",
            si(fit["beta_bus_bytes_per_s"], "B/s") if fit else "-",
            si(peak["busbw_bytes_per_s"], "B/s") + f" @ {_bytes(peak['bytes'])}",
            "budget" if c["stopped"] else ""])
    return rows


def size_rows(profile) -> tuple[list[str], list[list[str]]]:
    """Bus bandwidth (median) per message size (rows) and collective (columns)."""
    cols = profile.extras["comm"]["collectives"]
    sizes = sorted({r["bytes"] for c in cols for r in c["rows"]})
    header = ["size"] + [c["label"] for c in cols]
    body = []
    for s in sizes:
        cells = [_bytes(s)]
        for c in cols:
            hit = next((r for r in c["rows"] if r["bytes"] == s), None)
            cells.append(si(hit["busbw_bytes_per_s"], "B/s") if hit else "")
        body.append(cells)
    return header, body


def tables(profile):
    from rich.table import Table

    comm = profile.extras["comm"]
    t1 = Table(title=f"{profile.name}: collectives (bus bandwidth, nccl-tests convention)")
    for h in ("collective", "ranks", "sizes", "alpha", "beta (bus)", "peak busbw", ""):
        t1.add_column(h, justify="left" if h in ("collective", "sizes", "") else "right",
                      no_wrap=h == "collective")
    for row in summary_rows(profile):
        t1.add_row(*row)
    header, body = size_rows(profile)
    t2 = Table(title=f"bus bandwidth by message size (median of samples; {comm['mode']} mode)")
    for i, h in enumerate(header):
        t2.add_column(h, justify="left" if i == 0 else "right", no_wrap=True)
    for row in body:
        t2.add_row(*row)
    return t1, t2


def notes(profile) -> list[str]:
    roof = profile.measured
    out = [f"{c.level} ceiling: {si(c.value, 'B/s')} ({c.method})"
           for c in roof.memory if c.level in ("loopback", "PCIe", "NVLink", "network")]
    return out + list(roof.notes)


def run(nproc: int | None, mode: str, output: str | None, json_out: bool) -> int:
    """Probe, print the collective tables (or the JSON) and save the cluster profile.

    Under torchrun only rank 0 prints and writes; the other ranks return 0 quietly."""
    from ...cli.common import console, emit_json, err_console
    from ...hardware.profile import profile_to_dict, save_profile
    from ...report.tables import profile_table
    from .run import probe_comm, under_torchrun

    path = output or DEFAULT_OUTPUT
    if Path(path).suffix.lower() != ".json":
        raise InputError(f"-o for --comm must be a .json cluster profile; got '{path}'")
    if nproc is not None and under_torchrun():
        raise InputError("--nproc is set by torchrun (--nproc-per-node); drop --nproc")
    profile = _with_status(lambda say: probe_comm(nproc, mode, progress=say), err_console())
    if profile is None:          # a torchrun rank other than 0
        return 0
    save_profile(path, profile)
    if json_out:
        emit_json(profile_to_dict(profile))
        return 0
    out = console()
    for table in tables(profile):
        out.print(table)
    out.print(profile_table(profile))
    for note in notes(profile):
        out.print(f"note: {note}")
    out.print(f"probe took {profile.extras['wall_s']:.1f} s on the ranks; wrote {path}")
    return 0


def _with_status(fn, err):
    if not err.is_terminal:
        return fn(None)
    with err.status("comm probe: starting ranks") as status:
        return fn(lambda stage: status.update(f"comm probe: {stage}"))
