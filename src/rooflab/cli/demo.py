"""rooflab demo — measure this CPU, place reference kernels on its roof, write chart + report."""

from __future__ import annotations

import os  # noqa: F401 -- tests patch demo.os.replace (the rename in files_rename)
import sys
from pathlib import Path
from typing import Any

import typer

from ..errors import InputError, OutputError
from ..files import link_target, note_written, write_temp
from ..files_rename import held_open, replace

DEFAULT_OUTDIR = "rooflab-demo"
FILES = ("profile.json", "kernels.json", "roofline.png", "report.md")


def run_demo(progress=None) -> tuple[Any, Any]:
    """(profile, analysis): a quick probe, then the demo kernels on the measured roof."""
    from ..bench.zoo import DEMO_NAMES, run_zoo
    from ..model.analysis import analyze
    from ..probe.cpu import probe_cpu

    def part(lo: float, hi: float):
        return (lambda s, f: progress(s, lo + (hi - lo) * f)) if progress else None

    profile = probe_cpu(mode="quick", progress=part(0.0, 0.7))
    roof = profile.measured or profile.nominal
    kernels = run_zoo(roof, DEMO_NAMES, device="cpu", plan="quick", progress=part(0.7, 1.0))
    return profile, analyze(roof, kernels)


def render_files(profile, analysis) -> tuple[dict[str, str | bytes], list[str]]:
    """Every output file's contents, rendered in memory before anything is written."""
    from ..files import dumps_json
    from ..hardware.profile import profile_to_dict
    from ..model.schema import analysis_to_dict
    from ..report.chart import figure_bytes, plot_roofline

    notes: list[str] = []
    display = plot_roofline(profile.roofs, analysis.kernels,
                            title=f"{profile.name}: reference kernels on the measured roof")
    files: dict[str, str | bytes] = {
        "profile.json": dumps_json(profile_to_dict(profile)),
        "kernels.json": dumps_json(analysis_to_dict(analysis)),
        "roofline.png": figure_bytes(display, "png"),
    }
    try:
        from ..report.markdown import markdown_report
    except ImportError:
        notes.append("report.md not written: rooflab.report.markdown is not available in "
                     "this installation")
    else:
        from ..model.diagnose import diagnose
        from ..report.markdown import chart_image, machine_for

        diags = diagnose(analysis, machine_for(analysis, profile))   # once, for both
        md = markdown_report(analysis, profile, title=f"rooflab demo: {profile.name}",
                             diags=diags)
        # The chart is written beside the report: show it under the title, described as
        # the HTML report describes it (review 19c N13)
        head, _, rest = md.partition("\n\n")
        image = chart_image(analysis, display, diags, "roofline.png")
        files["report.md"] = f"{head}\n\n{image}\n\n{rest}"
    return files, notes


def check_outputs(outdir: Path) -> None:
    """Raise OutputError now, before the measurement, if any of the demo's files could not
    be written: each name in FILES, not only the first (a directory named report.md once
    failed after the 20 s run, with three files already replaced)."""
    from ..files import check_writable

    if outdir.exists() and not outdir.is_dir():
        raise InputError(f"-o '{outdir}' is a file; give a directory for the demo's outputs")
    for name in FILES:
        target = outdir / name
        if target.is_dir():   # the file names are fixed: "give a file name" cannot apply
            raise OutputError(f"{target}: is a directory, and the demo writes its {name} "
                              f"there ({', '.join(FILES)}); move it away or give another "
                              f"-o directory")
        check_writable(target)


def write_files(outdir: Path, files: dict[str, str | bytes]) -> list[Path]:
    """The files as one set: each written to a temporary file beside its target first, then
    all renamed into place, so a failed or interrupted write leaves the old set whole. A
    rename that fails (rare: each is one system call) names the files already replaced."""
    check_outputs(outdir)
    temps: list[tuple[Path, Path]] = []   # (temporary, target)
    try:
        for name, data in files.items():
            target = link_target(outdir / name)
            temps.append((_write_temp(target, data), target))
    except BaseException:
        _remove(tmp for tmp, _ in temps)
        raise
    done: list[Path] = []
    for i, (tmp, target) in enumerate(temps):
        try:
            replace(tmp, target)   # retried on Windows while antivirus holds it
        except BaseException as exc:
            # Ctrl-C or SIGTERM between two renames too (it caught OSError only, leaving
            # the later temporaries behind: review s22 r2 F6c); the files already renamed
            # are recorded (note_written), so the interrupted line names them
            _remove(t for t, _ in temps[i:])
            if not isinstance(exc, OSError):
                raise
            replaced = (f"already replaced: {', '.join(p.name for p in done)}; the others "
                        f"are as they were" if done else "no file was replaced")
            held = held_open(target, target, exc)   # Windows: open in Excel, a viewer
            why = held or f"{target}: cannot write the file ({exc.strerror or exc})"
            raise OutputError(f"{why}; {replaced}") from None
        done.append(target)
        note_written(outdir / list(files)[i])
    return [outdir / name for name in files]


def keep_profile(outdir: Path, profile) -> Path | None:
    """Where drawing the chart or the report fails after the measurement, the measured
    profile is kept (review s24 r2 F7: 40 s of probe thrown away) without breaking the
    all-or-nothing set: as profile.json in a folder that holds none of the demo's files
    yet (there is no older set), else beside the older set, which stays whole, named by
    when it was kept: profile.kept-20261202T074730Z.json (UTC). Said on stderr; None where
    it could not be written either.

    Named by its time, not profile.new.json (review s24 h2 F2): a later demo that succeeds
    writes a newer profile.json, and "new" would then name the older measurement. Not
    removed by that later demo either: the note told the user to pass its path to --on,
    and a measurement is not rooflab's to throw away."""
    import time

    from ..files import dumps_json, write_atomic
    from ..hardware.profile import profile_to_dict

    fresh = not any((outdir / name).exists() for name in FILES)
    kept = f"profile.kept-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    path = outdir / ("profile.json" if fresh else kept)
    try:
        write_atomic(path, dumps_json(profile_to_dict(profile)))
    except Exception:   # noqa: BLE001 - the error being raised is the one to tell
        return None
    from ..report.term_text import visible

    print(f"note: the measured profile is kept in {visible(str(path), inline=True)} "
          f"(`--on {visible(str(path), inline=True)}` in any verb); the demo's other "
          f"files were not written (the error below says why)", file=sys.stderr)
    return path


def _write_temp(target: Path, data: str | bytes) -> Path:
    """files.write_temp (named here so tests can make one write fail)."""
    return write_temp(target, data)


def _remove(paths) -> None:
    for path in paths:
        Path(path).unlink(missing_ok=True)


def register(app) -> None:
    @app.command("demo")
    def demo(
        outdir: str = typer.Option(DEFAULT_OUTDIR, "-o", "--output",
                                   help="directory for profile.json, kernels.json, "
                                   "roofline.png and report.md"),
        json_out: bool = typer.Option(False, "--json",
                                      help="print the profile and the analysis as JSON"),
    ) -> None:
        """Measure this machine (a quick probe), time a handful of reference kernels
        on its measured roof, print both tables, and write a chart and a short report
        (12-40 s in all on a 2-vCPU VM: longer under load or with a large last-level
        cache, which makes the DRAM arrays larger).

        Example: rooflab demo -o rooflab-demo   (then view rooflab-demo/roofline.png)
        """
        from .common import progress_bar, with_rooflab_version

        out_path = Path(outdir)
        check_outputs(out_path)   # every file, now, not after the measurement
        from ..report.chart_rc import quiet_config_dir
        from .probe import warn_if_busy, warn_load_notes

        # matplotlib's cache folder settled now, beside the outputs where nothing else is
        # writable (a read-only root filesystem), or refused in one line: not after the
        # measurement (review s24 r2 F7)
        quiet_config_dir(strict=True)
        warn_if_busy()   # before the long work, so the user can stop and retry
        with progress_bar("demo") as update:
            profile, analysis = run_demo(update)
            profile = with_rooflab_version(profile)
        try:
            files, notes = render_files(profile, analysis)
        except Exception:
            keep_profile(out_path, profile)
            raise
        written = write_files(out_path, files)
        if json_out:
            from ..hardware.profile import profile_to_dict
            from ..model.schema import SCHEMA_VERSION, analysis_to_dict
            from .common import emit_json

            emit_json({"schema_version": SCHEMA_VERSION, "profile": profile_to_dict(profile),
                       "analysis": analysis_to_dict(analysis),
                       "files": [str(p) for p in written]})
            warn_load_notes(profile)
            return
        print_demo(profile, analysis, written, notes)


def print_demo(profile, analysis, written: list[Path], notes: list[str]) -> None:
    from .bench import print_results
    from .common import wide_console, wrote

    out = wide_console()
    try:
        from ..report.tables import profile_notes, profile_table
    except ImportError:
        out.print("(the profile table needs rooflab.report.tables, not available here)")
    else:
        out.print(profile_table(profile))
        for note in profile_notes(profile):   # as `rooflab probe` says them
            out.print(f"note: {note}")
    print_results(analysis, None)
    for note in notes:
        out.print(f"  note: {note}")
    for path in written:   # on stderr and as text, as in every verb (review s22 h1 H2)
        wrote(path)
    if written:   # a first-time user's next steps, with this run's own (quoted) paths
        from shlex import quote

        kernels, prof = (quote(str(written[0].parent / n))
                         for n in ("kernels.json", "profile.json"))
        out.print(f"next: rooflab report {kernels} --on {prof}"
                  "   (what bounds each kernel, and what would move it)\n"
                  f"      rooflab bench --on {prof}"
                  "   (every reference kernel of the zoo on this roof)",
                  highlight=False, markup=False, soft_wrap=True)   # copyable: no wrap
