"""`rooflab probe --comm`: run the communication probe, print the collective table, save
the cluster profile. Called by cli/probe.py (which owns the `probe` verb); the probe itself
is rooflab.probe.comm."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..model.link_fits import RESIDUAL_WARN
from ..probe.comm.rendezvous import EveryRankError
from ..units import LINKS, fmt_bytes_binary, fmt_fraction, fmt_seconds, plain, si

DEFAULT_OUTPUT = "rooflab-comm-profile.json"


ABBREV = {"all-reduce": "AR", "all-gather": "AG", "reduce-scatter": "RS", "all-to-all": "A2A",
          "broadcast": "BC", "send/recv": "P2P"}


def _abbrev(label: str) -> str:
    head, _, pair = label.partition(" ")
    if label.startswith("send/recv"):
        head, pair = "send/recv", label.removeprefix("send/recv").strip()
    return (ABBREV.get(head, head) + (f" {pair}" if pair else "")).strip()


def _short(n: float) -> str:
    return fmt_bytes_binary(n).replace(" KiB", "K").replace(" MiB", "M").replace(" GiB", "G")


def _resid(fit) -> str:
    """The fit's worst relative residual over its samples, `!` past RESIDUAL_WARN (a fit
    that misses its own points by 50 % describes none of them; review r3 F1)."""
    if not fit or fit.get("max_rel_residual") is None:
        return "-"
    worst = fit["max_rel_residual"]
    return fmt_fraction(worst) + (" !" if worst > RESIDUAL_WARN else "")


def summary_rows(profile) -> list[list[str]]:
    """One row per collective: sizes, alpha, beta, the fit's worst residual, peak bus
    bandwidth, notes."""
    rows = []
    for c in profile.extras["comm"]["collectives"]:
        fit, pts = c["fit"], c["rows"]
        peak = max(pts, key=lambda r: r["busbw_bytes_per_s"])
        rows.append([
            c["label"], f"{_short(pts[0]['bytes'])}..{_short(pts[-1]['bytes'])} ({len(pts)})",
            fmt_seconds(fit["alpha_s"]) if fit else "-",
            si(fit["beta_bus_bytes_per_s"], "B/s") if fit else "-", _resid(fit),
            si(peak["busbw_bytes_per_s"], "B/s"), _short(peak["bytes"]),
            "budget" if c["stopped"] else ""])
    return rows


def _by_size(profile, cell) -> tuple[list[str], list[list[str]]]:
    """One row per message size, one column per collective: cell(row) of each measured
    size, '' where a collective did not reach it."""
    cols = profile.extras["comm"]["collectives"]
    sizes = sorted({r["bytes"] for c in cols for r in c["rows"]})
    header = ["size"] + [_abbrev(c["label"]) for c in cols]
    body = []
    for s in sizes:
        cells = [_short(s)]
        for c in cols:
            hit = next((r for r in c["rows"] if r["bytes"] == s), None)
            cells.append(cell(hit) if hit else "")
        body.append(cells)
    return header, body


def size_rows(profile) -> tuple[list[str], list[list[str]]]:
    """Bus bandwidth (median, GB/s) per message size (rows) and collective (columns)."""
    # the column's unit is fixed (GB/s): an NVL72's 1800 is '1800', not '1.8e+03'
    return _by_size(profile, lambda r: plain(r['busbw_bytes_per_s'] / 1e9, 3))


def _us(seconds: float) -> str:
    """Microseconds as nccl-tests prints its `time (us)`: whole from 100 us up, else 3
    significant digits ('45.2', '1023', '213456')."""
    us = seconds * 1e6
    return f"{us:.0f}" if us >= 100 else f"{us:.3g}"


def time_rows(profile) -> tuple[list[str], list[list[str]]]:
    """Time per call (median of the samples, us) per message size and collective:
    nccl-tests' `time (us)` column, so a small message's latency is read, not back-computed
    from its bandwidth (review s20 r3 F4); rows[].seconds in the JSON."""
    return _by_size(profile, lambda r: _us(r["seconds"]))


def _table(title: str, header: list[str], rows: list[list[str]]):
    from rich.table import Table

    t = Table(title=title, box=None, header_style="bold")
    for i, h in enumerate(header):
        t.add_column(h, justify="left" if i == 0 or h in ("sizes", "") else "right",
                     no_wrap=True, min_width=len(h))
    for row in rows:
        t.add_row(*row)
    return t


def tables(profile):
    comm = profile.extras["comm"]
    t1 = _table(f"{profile.name}: {comm['world_size']} ranks, bus bandwidth by the "
                f"nccl-tests convention",
                ["collective", "sizes", "alpha", "beta (bus)", "resid", "peak busbw", "at", ""],
                summary_rows(profile))
    header, body = size_rows(profile)
    t2 = _table(f"bus bandwidth, GB/s, by message size (median of samples; {comm['mode']} "
                f"mode): AR all-reduce, AG all-gather, RS reduce-scatter, A2A all-to-all, "
                f"BC broadcast, P2P send/recv; size = the whole buffer, as nccl-tests",
                header, body)
    header, body = time_rows(profile)
    t3 = _table("time per call, us, by message size (median of samples)", header, body)
    return t1, t2, t3


# the link levels a cluster profile can hold: the one list (units.LINKS, review 19e F-o)
LINK_LEVELS = LINKS


def notes(profile) -> list[str]:
    """Each link ceiling and how it was measured, then every measured ceiling's warning
    (the `!` in the table: samples that disagree), then the roof's notes."""
    roof = profile.measured
    links = [c for c in roof.memory if c.level in LINK_LEVELS]
    out = [f"{c.level} ceiling: {si(c.value, 'B/s')} ({c.method})" for c in links]
    out += [w for c in links + [c for c in roof.memory + roof.compute if c not in links]
            for w in c.warnings]
    # each once: `DRAM (real traffic)` carries a copy of DRAM's warning, and the fits' note
    # is both computed here and in the roof's notes (review s20 r3 F6)
    return list(dict.fromkeys(out + _resid_notes(profile) + list(roof.notes)))


def _resid_notes(profile) -> list[str]:
    """Say which fits miss their own samples past RESIDUAL_WARN (the resid column's `!`):
    `rooflab llm --link-from` and `scale` repeat it where they use such a fit. A profile
    probed since s20 has it in measured.notes too (notes() drops the repeat)."""
    from ..probe.comm.fit import misfit_notes

    return misfit_notes(profile.extras["comm"]["collectives"])


def run(nproc: int | None, mode: str, output: str | None, json_out: bool,
        timeout_s: float | None = None) -> int:
    """Probe, print the collective tables (or the JSON) and save the cluster profile.
    `timeout_s`: `--timeout S`, how long a rank may reach no new stage (and wait in one
    collective) before the probe stops; it replaces ROOFLAB_COMM_TIMEOUT (None: that
    variable, else the mode's).

    Under torchrun only rank 0 prints and writes; the other ranks return 0 quietly."""
    from ..hardware.profile import profile_to_dict, save_profile
    from ..probe.comm.run import probe_comm, under_torchrun
    from ..report.tables import profile_table
    from .common import console, emit_json, err_console, refuse_directory, wrote

    path = output or DEFAULT_OUTPUT
    refuse_directory("-o", path, "comm.json")
    if Path(path).suffix.lower() != ".json":
        raise InputError(f"-o for --comm must be a .json cluster profile; got '{path}'")
    if nproc is not None and under_torchrun():
        raise InputError("--nproc is set by torchrun (--nproc-per-node); drop --nproc")
    from ..files import check_writable

    check_writable(path)   # fail now, not after the measurement
    from ..probe.comm.rendezvous import check_timeout, comm_timeout

    check_timeout(timeout_s)   # inf and nan too: they reached the ranks as the variable
    if timeout_s is None and not under_torchrun():
        # a bad ROOFLAB_COMM_TIMEOUT before the busy warning (--timeout replaces it, so it
        # is not read then; under torchrun each rank checks it, one line per host)
        comm_timeout(0.0)
    if nproc is not None and not under_torchrun():
        from ..probe.comm.launch import check_nproc, usable_cpus

        check_nproc(nproc, usable_cpus())   # before the busy warning, as every bad flag
    from .probe import warn_if_busy, warn_load_notes

    if not under_torchrun():   # under torchrun the other ranks are the load
        from ..probe.comm.needs import check_needs
        from ..probe.comm.run import default_nproc

        check_needs(mode, nproc or default_nproc())   # a missing package before the warning
        warn_if_busy()
    try:
        profile = _with_status(lambda say: probe_comm(nproc, mode, timeout_s=timeout_s,
                                                      progress=say), err_console())
    except EveryRankError:
        if not _says_errors():
            return 2
        raise
    if profile is None:          # a torchrun rank other than 0
        return 0
    from .common import with_rooflab_version

    # host.libraries.rooflab, as `rooflab probe` records it: which version measured it
    profile = with_rooflab_version(profile)
    save_profile(path, profile)
    if json_out:
        emit_json(profile_to_dict(profile))
        warn_load_notes(profile)
        from .common import warn

        for note in _resid_notes(profile):   # the table's `resid !` note (review s20 r3 F8)
            warn(note)
        # the profile is saved under --json too (-o, else DEFAULT_OUTPUT, overwriting one
        # there): said on stderr, as every verb's `wrote FILE` (review s19 r2 F6)
        wrote(path)   # text, never markup: a path '[/]x' (s22 r1 F5)
        return 0
    out = console()
    for table in tables(profile):
        out.print(table)
    out.print(profile_table(profile))
    for note in notes(profile):
        out.print(f"note: {note}")
    out.print(f"probe took {profile.extras['wall_s']:.1f} s on the ranks")
    wrote(path)   # on stderr, as in every verb (review s22 h1 H2)
    return 0


def _says_errors() -> bool:
    """Under torchrun every rank meets the same bad setting and stops with the same error;
    local rank 0 alone prints it (one line per host, not one per rank), the others exit 2
    quietly. torchrun reports the failure itself."""
    from ..probe.comm.run import under_torchrun

    return not under_torchrun() or os.environ.get("LOCAL_RANK", "0") == "0"


def _with_status(fn, err):
    import sys

    from .common import isatty

    # isatty, not rich's is_terminal: FORCE_COLOR makes rich call a CI log a terminal (s21 r7 F2)
    if not isatty(sys.stderr):
        return fn(None)
    with err.status("comm probe: starting ranks") as status:
        return fn(lambda stage: status.update(f"comm probe: {stage}"))
