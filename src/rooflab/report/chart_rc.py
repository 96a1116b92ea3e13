"""The matplotlib settings a chart is drawn and written under (review s23 r2 F4, F5).

F4: matplotlib reads the user's matplotlibrc when it is imported, and every key rooflab
does not set itself leaked into the chart: `font.size: 16` made a 9 x 6 in SVG 448 pt
tall instead of 432 and moved the axes; `savefig.bbox: tight` or `figure.dpi` would have
changed the PNG's size. Charts are drawn and written inside pinned_rc(): matplotlib's own
defaults (rcParamsDefault, less the keys about the session rather than the figure:
matplotlib.style's "default"), so the same input gives the same chart for everyone. The
font FAMILIES are the one thing kept from the user's rc: they pick which installed font
draws the text (a user may have named a CJK font there), and chart_fonts adds its
fallbacks after them; sizes, dpi, lines, layout and savefig are matplotlib's defaults.

F5: with an unwritable HOME (a service account, `docker run -u`), importing matplotlib
printed two lines on stderr ("mkdir -p failed for path ...", "Matplotlib created a
temporary cache directory ..."), even under -q. quiet_config_dir() does beforehand what
matplotlib would do, silently: where MPLCONFIGDIR is unset and matplotlib's default
config or cache folder cannot be made writable, MPLCONFIGDIR is set to a private
temporary folder, removed at exit; a matplotlibrc in the default config folder is still
read (MATPLOTLIBRC). It runs when chart_parts is imported, which every
module that imports matplotlib (chart*, sweep_chart) does first.

Where no folder at all can be written (s24 r2 F7), that import does not raise: `report`
imports chart_parts without drawing a chart, and refused to print its report (review s24
h2 F1). Only matplotlib's own import is refused then, in one `error:` line: a finder
(_RefuseMatplotlib) waits for it, by which time the command may have checked an output
folder to put the cache in (`plot` without -o: the current folder). `demo` refuses before
its measurement: quiet_config_dir(strict=True).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

# The rc keys kept from the user's matplotlibrc (see above): which fonts, not their sizes
FONT_FAMILY_KEYS = ("font.family", "font.sans-serif", "font.serif", "font.monospace",
                    "font.cursive", "font.fantasy")


def _default_dirs() -> list[Path]:
    """matplotlib's config and cache folders where MPLCONFIGDIR is unset
    (matplotlib._get_config_or_cache_dir): XDG's on Linux, ~/.matplotlib elsewhere."""
    home = Path.home()
    if sys.platform.startswith(("linux", "freebsd")):
        return [Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config", "matplotlib"),
                Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache", "matplotlib")]
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return [Path(os.environ["LOCALAPPDATA"], "matplotlib")]
    return [home / ".matplotlib"]


def _writable(folder: Path) -> bool:
    """Whether matplotlib could use the folder: made (as matplotlib makes it) and writable."""
    try:
        folder = folder.resolve()
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):
        return False
    return os.access(folder, os.W_OK) and folder.is_dir()


def quiet_config_dir(strict: bool = False) -> str | None:
    """Point MPLCONFIGDIR at a private temporary folder (removed at exit) where it is unset,
    matplotlib is not imported yet, and its default folders cannot be used; returns that
    folder, or None where nothing was changed. Where no folder at all can be written
    (_beside_outputs): strict raises OutputError now; else None, and importing matplotlib
    tries again, then raises it (see the module's docstring)."""
    if "matplotlib" in sys.modules or os.environ.get("MPLCONFIGDIR"):
        return None
    try:
        dirs = _default_dirs()
        usable = all(_writable(d) for d in dirs)
    except RuntimeError:   # Path.home() unknown
        dirs, usable = [], False
    if usable:
        return None
    # MPLCONFIGDIR moves the config folder as well as the cache: where only the cache is
    # unusable, the user's matplotlibrc (their fonts: pinned_rc keeps its families) would
    # no longer be read (review s23 h2 F3). MATPLOTLIBRC names it; one the user set wins,
    # and a ./matplotlibrc still comes first (matplotlib.matplotlib_fname).
    rc = dirs[0] / "matplotlibrc" if dirs else None
    with contextlib.suppress(OSError):
        if rc is not None and rc.is_file() and os.access(rc, os.R_OK):
            os.environ.setdefault("MATPLOTLIBRC", str(rc))
    try:
        folder = tempfile.mkdtemp(prefix="rooflab-matplotlib-")
    except OSError:
        from ..errors import OutputError

        try:
            folder = _beside_outputs(dirs)
        except OutputError:
            if strict:
                raise
            if _REFUSE not in sys.meta_path:   # matplotlib's import decides
                sys.meta_path.insert(0, _REFUSE)
            return None
    os.environ["MPLCONFIGDIR"] = folder
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _beside_outputs(dirs: list[Path]) -> str:
    """Where no temporary folder is usable either (a read-only root filesystem without a
    /tmp volume, a read-only HOME: review s24 r2 F7), a hidden folder in the folder this
    command writes its files to, known writable (files.check_writable tried it); matplotlib
    failed there, "internal error ... this is a bug" after the whole measurement of `demo`.
    Where no output was checked, one `error:` line naming what to set."""
    from ..errors import OutputError
    from ..files import WRITABLE_FOLDERS

    # the latest command's first; then the folders of the outputs its command line names,
    # where matplotlib is imported before they are checked (`plot` imports the chart
    # module to know its suffixes): making the folder there is the check
    for place in [*reversed(WRITABLE_FOLDERS), *_output_folders()]:
        with contextlib.suppress(OSError):
            return tempfile.mkdtemp(prefix=".rooflab-matplotlib-", dir=place)
    home = ", ".join(str(d) for d in dirs) or "the home folder (unknown here)"
    raise OutputError(f"matplotlib needs a writable folder for its cache, and none is: "
                      f"{home} cannot be written, and no temporary folder is usable "
                      f"(TMPDIR={os.environ.get('TMPDIR', 'unset')}); set MPLCONFIGDIR or "
                      f"TMPDIR to a writable folder")


def _output_folders() -> list[Path]:
    """The nearest existing folder of each output the running command names (-o, --output,
    --chart: files_generator.generator's command line); none outside a command."""
    from ..files_generator import generator

    argv = (generator() or {}).get("command", [])
    names = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg in _OUTPUTS]
    names += [arg.partition("=")[2] for arg in argv
              if arg.partition("=")[0] in _OUTPUTS and "=" in arg]
    folders = []
    for name in filter(None, names):
        folder = Path(name).absolute().parent
        while not folder.is_dir() and folder != folder.parent:
            folder = folder.parent
        folders.append(folder)
    return folders


_OUTPUTS = ("-o", "--output", "--chart")


class _RefuseMatplotlib:
    """An import finder (sys.meta_path) for where quiet_config_dir found no writable folder:
    when matplotlib is about to be imported, it looks again (strict), where the running
    command has checked its output folder since; OutputError's one line where there is
    still none (matplotlib's own OSError was "internal error ... this is a bug"), and it
    stays for the next try (a notebook, TMPDIR set since). It finds no module itself: the
    import goes on, MPLCONFIGDIR set, and it leaves sys.meta_path."""

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib":
            return None
        quiet_config_dir(strict=True)
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        return None


_REFUSE = _RefuseMatplotlib()


@contextlib.contextmanager
def pinned_rc() -> Iterator[None]:
    """While drawing or writing a chart: matplotlib's default rcParams (not the user's
    matplotlibrc), the user's font families kept (see the module's docstring)."""
    import matplotlib
    import matplotlib.style

    fonts = {k: matplotlib.rcParams[k] for k in FONT_FAMILY_KEYS}
    with matplotlib.style.context("default"), matplotlib.rc_context(fonts):
        yield
