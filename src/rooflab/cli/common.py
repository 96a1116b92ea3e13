"""Shared CLI helpers: JSON output, atomic file output, the console, ncu's metric notes."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import check_writable, json_pieces, write_atomic

# A table printed into a pipe or a CI log has no terminal width to fit; rich would wrap it
# at 80 columns, splitting kernel names over lines. Logs get this width instead.
PIPE_WIDTH = 160


# The characters of a document standard output receives whole, as when every document was
# one string: a failure while one this long is made prints none of it (json_errors' error
# document goes out instead); a longer one is written as it is made (s32: 240 MB at 100,000
# kernels, held three times over, was 2.2 GB of a what-if's peak).
HELD = 1 << 23


def emit_json(obj: Any) -> None:
    """obj's JSON on stdout (files.json_pieces): whole once made, up to HELD characters;
    past that, piece by piece as it is made, never whole in memory."""
    pieces = json_pieces(obj)
    held: list[str] = []
    size = 0
    for piece in pieces:
        held.append(piece)
        size += len(piece)
        if size >= HELD:
            break
    for piece in held:
        sys.stdout.write(piece)
    held.clear()
    for piece in pieces:
        sys.stdout.write(piece)


def console():
    """The stdout console of every verb: a terminal's own width, or for a pipe/log (no
    terminal) PIPE_WIDTH columns, so a table keeps one line per row and a number is never
    cut to an ellipsis (review 18c F12: probe tables read `181…` in a CI log); COLUMNS,
    when a positive whole number, still wins. A COLUMNS of 0 (fish sets it while it
    starts, a pty wrapper with a 0x0 size) or of no number counts as unset, as in
    shutil.get_terminal_size: rich took 0 as the width and printed nothing (s21 r7 F1).
    "A terminal" is stdout being one (isatty): FORCE_COLOR, which CI jobs export for
    other tools' colours, makes rich call a pipe a terminal, and a log then got tables
    folded at 80 columns (F2); the colour FORCE_COLOR asks for is kept."""
    return _safe_console()(highlight=False, soft_wrap=False, width=_width(sys.stdout),
                           height=_height(sys.stdout))


def _width(stream) -> int:
    """COLUMNS if valid, else the terminal's width, else (a pipe, a file) PIPE_WIDTH."""
    width = columns()
    if width is None:
        width = terminal_width(stream) if isatty(stream) else PIPE_WIDTH
    return width


def columns() -> int | None:
    """COLUMNS when it is a positive whole number; None otherwise (unset, 0, -5, abc)."""
    import os

    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def terminal_width(stream) -> int:
    """The width of the terminal `stream` is (80 where it cannot be told)."""
    import os

    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80


def isatty(stream) -> bool:
    """Whether a standard stream is a terminal (False for None: a closed stdout)."""
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, OSError, ValueError):   # a closed file, a test's capture
        return False


wide_console = console   # the older name, kept for the verbs that import it


def err_console():
    # the width chosen as console()'s: COLUMNS=0 left `wrote FILE` unsaid (s21 r7 F1)
    return _safe_console()(stderr=True, highlight=False, width=_width(sys.stderr),
                           height=_height(sys.stderr))


def _height(stream) -> int:
    """The terminal's height (LINES when a whole number), passed with the width: rich takes
    a TERM=dumb terminal for 80x25 unless given both, and folded every table at 80 columns
    whatever COLUMNS said (review s22 r3 F5)."""
    import os

    value = os.environ.get("LINES", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        return os.get_terminal_size(stream.fileno()).lines or 25
    except (AttributeError, OSError, ValueError):
        return 25


_SAFE: list = []


def _safe_console():
    """rich's Console that shows control characters in the text it prints as escapes
    (report.term_text.visible): a kernel name holding ESC [ 2 J cleared the screen
    (review s22 r1 F7). Strings are made visible before layout (render_str), so a table
    is sized for the escapes; anything else (a Text built from a name) at output, where
    rich's own codes are in the style or in control segments, never in the text."""
    if _SAFE:
        return _SAFE[0]
    from rich.console import Console
    from rich.errors import MarkupError
    from rich.segment import Segment

    from ..report.term_text import visible

    class SafeConsole(Console):
        def render_str(self, text: str, **kwargs):
            text = visible(text)
            try:
                return super().render_str(text, **kwargs)
            except MarkupError:   # a name from a file, unescaped: shown as it is, no crash
                return super().render_str(text, **{**kwargs, "markup": False})

        def _render_buffer(self, buffer) -> str:
            # rooflab prints no links: a '[link=http://evil]GPU[/link]' in a name that
            # reached rich as markup would be a live one (review s22 r1 F5)
            return super()._render_buffer(
                seg if seg.control else
                Segment(visible(seg.text),
                        seg.style.update_link(None) if seg.style and seg.style.link
                        else seg.style, None)
                for seg in buffer)

    _SAFE.append(SafeConsole)
    return SafeConsole


def wrote(path: str) -> None:
    """`wrote FILE` on stderr, in every verb: stdout holds only the verb's data, so
    `rooflab ncu x.csv -o c.csv > table.txt` keeps the table alone (review s22 r3 F7). The
    path is text, never markup ('x[/].md' crashed rich: r1 F5), and its control characters
    are shown escaped. Said under -q too: it is the answer, not a note."""
    from ..report.term_text import visible

    print(f"wrote {visible(str(path), inline=True)}", file=sys.stderr)


@contextmanager
def progress_bar(label: str, quiet: bool = False) -> Iterator[Callable[[str, float], None]]:
    """The one progress bar of every long verb: on stderr, cleared when done, and silent
    when stderr is not a terminal (CI logs, pipes; isatty, whatever FORCE_COLOR says: its
    cursor codes and redraws filled CI logs, s21 r7 F2) or with --quiet. Yields
    update(stage, fraction in [0, 1])."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = err_console()
    with Progress(TextColumn("{task.description:<36}"), BarColumn(),
                  TextColumn("{task.percentage:>3.0f} %"), TimeElapsedColumn(),
                  console=console, transient=True,
                  disable=(quiet or is_quiet() or not console.is_terminal
                           or not isatty(sys.stderr))) as bar:
        task = bar.add_task(label, total=1.0)

        def update(stage: str, fraction: float) -> None:
            bar.update(task, completed=min(max(fraction, 0.0), 1.0),
                       description=f"{label}: {stage}")

        yield update


def save_text(path: str, text: str) -> None:
    write_atomic(path, text)


def refuse_directory(option: str, path: str | None, example: str) -> None:
    """`-o out/` or `-o .`: a folder has no suffix to tell the format by; name a file in it."""
    from ..files import is_directory  # never raises: a 300-byte name is said once, later

    if path and is_directory(path):
        raise InputError(f"{option} {path}: is a directory; give a file name such as "
                         f"{Path(path) / example}")
    if path and path.endswith(("/", os.sep)):   # os.sep: "\\" on Windows
        # `-o newdir/` (no such folder yet) said "got 'no suffix'" (s38 I)
        raise InputError(f"{option} {path}: names a directory (it ends in '/'); give a "
                         f"file name such as {Path(path) / example}")


def check_output(path: str | None, suffixes: Sequence[str], option: str = "-o",
                 inputs: Sequence[str | None] = ()) -> None:
    """Before any work: refuse an output suffix the verb cannot write, a path that cannot
    be written (a directory, a read-only place) or one of the verb's own inputs, instead
    of failing (or overwriting the input) at the end."""
    if not path:
        return
    if path == "-":   # no verb writes its file to stdout; it said "unknown suffix '(none)'"
        raise InputError(f"{option} - is not supported here: leave {option} out to print "
                         f"the result (--json, where the verb takes it, prints its JSON)")
    refuse_directory(option, path, "out" + suffixes[0])
    refuse_input_as_output(path, [i for i in inputs if i], option)
    suffix = Path(path).suffix.lower()
    if suffix not in suffixes:
        raise InputError(f"{option} {path}: unknown suffix '{suffix or '(none)'}'; use "
                         f"{', '.join(suffixes)}")
    check_writable(path)


def refuse_input_as_output(path: str | None, inputs: Sequence[str],
                           option: str = "-o") -> None:
    """Before any work: `-o` naming one of the verb's own input files would replace that
    input with the result (a nightly baseline overwritten by its comparison)."""
    if not path:
        return
    out = Path(path)
    for given in inputs:
        src = Path(given)
        try:
            same = out.exists() and src.exists() and out.samefile(src)
        except OSError:
            same = False
        if same or out.resolve() == src.resolve():
            raise InputError(f"{option} {path}: is also an input ({given}); writing there "
                             f"would replace it: give the output another name")


def with_rooflab_version(profile):
    """The probed profile with host.libraries.rooflab (this version) among the library
    versions it records: a profile found later says which rooflab measured it."""
    from collections.abc import Mapping
    from dataclasses import replace

    from .. import __version__

    libs = profile.host.get("libraries")
    libs = dict(libs) if isinstance(libs, Mapping) else {}
    return replace(profile, host={**profile.host, "libraries": {**libs, "rooflab": __version__}})


# `rooflab -q VERB`: notes and warnings are left off stderr (a --json document keeps its
# notes; errors are always said). Set by the root callback (cli/app.py) for one command.
_QUIET: list[bool] = []


def set_quiet(on: bool) -> None:
    _QUIET[:] = [True] if on else []


def is_quiet() -> bool:
    return bool(_QUIET)


def say(kind: str, message: str) -> None:
    """A `note:` or `warning:` line on stderr, unless -q."""
    if not _QUIET:
        say_line(f"{kind}: {message}")


def say_line(line: str) -> None:
    """A line already worded as a note or warning ('warning: ...'), on stderr unless -q."""
    from ..report.term_text import visible

    if not _QUIET:   # a name's ESC [ 2 J in a warning cleared the screen (s22 r1 F7)
        print(visible(line), file=sys.stderr)


def warn(message: str) -> None:
    say("warning", message)


def metric_notes(kernels, shown=()) -> tuple[str, ...]:
    """The kernels' notes on which metric stood in for another (a full-set .ncu-rep's
    derived__lts__lts2xbar_bytes.sum for lts__t_bytes.sum, sector counts for bytes, an
    assumed tensor shape), once per distinct note with the kernels it holds for: the same
    kernel read from a CSV export and from its report gets other L2/L1 bytes, and the
    terminal must say why, not only the JSON's meta.notes. Notes already in `shown` (the
    partial-FLOP ones) and the preferred counts ('(counted)') are left out. Only ncu's
    kernels count: `rooflab report/plot` mix in rocprof and torch ones, whose notes say
    other things."""
    kernels = [k for k in kernels if k.meta.get("source") == "ncu"]
    held: dict[str, list[str]] = {}
    for k in kernels:
        for note in k.meta.get("notes") or ():
            if "(counted)" not in note and not any(note in s for s in shown):
                held.setdefault(note, []).append(k.name)
    out = []
    for note, names in held.items():
        every = "both kernels" if len(names) == 2 else f"all {len(names)} kernels"
        who = (every if len(names) == len(kernels) > 1
               else ", ".join(names[:3]) + (f", ... ({len(names)} kernels)"
                                            if len(names) > 3 else ""))
        out.append(f"{who}: {_explained(note)}")
    return tuple(out)


def _explained(note: str) -> str:
    """'L2 bytes from derived__lts__lts2xbar_bytes.sum' with what it stands in for."""
    from ..ingest.ncu_metrics import LEVEL_METRICS

    level, _, metric = note.partition(" bytes from ")
    wanted = LEVEL_METRICS.get(level, ())
    if metric in wanted[1:]:
        return (f"{note}, not {wanted[0]} (not in the file): {level} AI differs from a "
                f"file that has it (a --metrics CSV export)")
    return note
