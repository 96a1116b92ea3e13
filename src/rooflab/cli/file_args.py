"""File arguments that are read once: `-` (standard input) and a pipe given by name (a
FIFO, `<(...)`, /dev/stdin from a pipe), each copied to a temporary file before the verb
runs (moved here from cli/main.py).

A pipe was read twice: once to tell the file's kind (files_kind.file_kind sniffs its head),
then by the reader, so a named FIFO hung waiting for a second writer and `<(cat k.json)`
or `cat k.json | rooflab report /dev/stdin` read as "the file is empty" (review s22 r2
F5). Saved first, it is read as a regular file; messages name the pipe, not the copy."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from ..errors import InputError
from ..input_names import SAVED as _SAVED

# The verbs whose positional arguments are input files (kernel files, profiler exports; a
# model's config.json: llm and train, s38 G; scale has none, but its --on and --link-from
# name files, s38 N): `-` among them reads standard input (review 12c I).
FILE_VERBS = ("report", "plot", "whatif", "choose", "compare", "ncu", "torch", "rocprof",
              "llm", "train", "scale")


def saved_inputs(app, argv: list[str], folder: str) -> list[str]:
    """argv with a file argument `-` (once), or the path of a pipe, replaced by a file in
    `folder` holding what it gave."""
    verb = next((a for a in argv if not a.startswith("-")), None)
    if verb not in FILE_VERBS:
        return argv
    takes_value = _value_options(app, verb)
    out, stdin_seen, seen_verb = [], False, False
    for i, arg in enumerate(argv):
        before = argv[i - 1] if i else ""
        # --on and --link-from name files too: `llm --link-from -` said "-: file not found"
        value_of = before in takes_value and before not in ("--on", "--link-from")
        if arg == verb and not seen_verb:
            seen_verb = True
            out.append(arg)
        elif arg == "-" and not value_of:
            if stdin_seen:
                raise InputError("- given twice: standard input can be read once; save one "
                                 "of the inputs to a file and pass its path")
            stdin_seen = True
            out.append(_save(_read_stdin(), folder, "-"))
        elif not value_of and not arg.startswith("-") and _is_pipe(arg):
            out.append(_save(_read_pipe(arg), folder, arg))
        else:
            out.append(arg)
    return out


# Options whose empty value (`--memory "$MEM"`, MEM unset) read as not given, silently:
# the device's memory, a link's bandwidth, the catalog's every kind (s38 G). Not --kernel
# or --exclude: their '' is an empty filter by design (patterns() drops it), so
# `--exclude "$SKIP"` with SKIP empty means none (s38 R)
EMPTY_REFUSED = ("--link-from", "--memory", "--compare", "--kind", "--link-bw", "--inter-bw",
                 "--tp-link-bw", "--pp-link-bw", "--precision")


def refuse_empty_arguments(app, argv: list[str]) -> None:
    """Before the verb: a file argument '' (an unset variable) of a file verb, which read
    as '.' (report, whatif, compare: the working folder taken for a rocprof folder) or as
    ": file not found", and an EMPTY_REFUSED option given ''."""
    args = argv[:argv.index("--")] if "--" in argv else argv   # past it: a script's own
    verb = next((a for a in args if not a.startswith("-")), None)
    if verb in ("torch", "bench") and "--run" in args:   # `--run s.py ARGS`: the script's
        return
    for i, arg in enumerate(args):
        option, eq, value = arg.partition("=")
        given = args[i + 1] if arg in EMPTY_REFUSED and i + 1 < len(args) else None
        if (eq and option in EMPTY_REFUSED and not value.strip()) or (
                given is not None and not given.strip()):
            raise InputError(f"{option} '': the value is empty (an unset variable?); give "
                             f"one, or leave {option} out")
    if verb not in (*FILE_VERBS, "likwid", "perf") or verb in ("llm", "train", "scale"):
        return   # llm and train say an empty model themselves (config_names.load_config);
        # scale takes no file argument (typer refuses an extra one)
    takes_value = _value_options(app, verb)
    # past `--` a file verb's arguments are files still (`report k.json -- ''` read '.');
    # likwid's and perf's are the command they run
    files = argv if verb in FILE_VERBS else args
    for i, arg in enumerate(files):
        if not arg.strip() and (not i or argv[i - 1] not in takes_value):
            raise InputError(f"a file argument of `rooflab {verb}` is empty ('': an unset "
                             f"variable?); give the file's path")


def read_once(argv: list[str]) -> bool:
    """Whether argv names standard input (`-`) or a pipe: saved_inputs has work to do."""
    return any(a == "-" or (not a.startswith("-") and _is_pipe(a)) for a in argv)


def named(text: str) -> str:
    """A message with each temporary copy called by what it was read from."""
    from ..files import STDIN_NAME

    for copy, source in _SAVED.items():
        if source != "-":
            text = text.replace(copy, source)
            continue
        # the first mention says where (`<stdin>: ...`); a later one is in a command to
        # type (`rooflab report - --on HW`), where standard input is '-' (s38 I)
        head, sep, rest = text.partition(copy)
        text = head + STDIN_NAME + rest.replace(copy, "-") if sep else text
    return text


def forget() -> None:
    _SAVED.clear()


def _save(data: bytes, folder: str, source: str) -> str:
    from ..files import stdin_to_file

    sub = Path(folder) / str(len(_SAVED))   # one folder each: `compare <(a) <(b)`
    sub.mkdir()
    path = str(stdin_to_file(data, sub, source))
    _SAVED[path] = source
    return path


def _is_pipe(arg: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(arg).st_mode)
    except (OSError, ValueError):
        return False


def _read_pipe(arg: str) -> bytes:
    try:
        with open(arg, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"{arg}: cannot read the pipe ({exc.strerror or exc}); give a "
                         f"file's path instead") from None


def _value_options(app, verb: str) -> set[str]:
    """The options of `verb` that take a value (`-o FILE`, `--on NAME`), from the click
    command: a `-` after one of them is that option's value, not a file argument."""
    command = app.commands.get(verb)
    names: set[str] = set()
    for param in getattr(command, "params", ()):
        if getattr(param, "param_type_name", "") == "option" and not (
                getattr(param, "is_flag", False) or getattr(param, "count", False)):
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names


def _read_stdin() -> bytes:
    stream = sys.stdin
    if stream is None or stream.isatty():
        raise InputError("-: reads standard input, which is a terminal here; pipe a file in "
                         "(`rooflab llm ... --json | rooflab whatif - ...`) or give its path")
    try:
        return stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode()
    except (OSError, ValueError) as exc:   # closed, or a test's capture that refuses
        raise InputError(f"-: cannot read standard input ({exc}); give the file's path "
                         f"instead") from None
