"""Options several verbs share, declared once (typer reads them from `Annotated` hints), and
the one command line of the profiler verbs (ncu, rocprof) built from them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ..ingest.profile_import import ProfileImport

# What --on takes, said once for every verb (review 14b F7): cli/inputs.py: resolve_on
# reads each of these. A verb adds words only where its --on truly differs (on_option).
ON_HELP = ("hardware name (rooflab specs list), a profile/roof JSON file, rocprof-compute's "
           "roofline.csv, or an .ncu-rep report (its recorded peaks); default: "
           "$ROOFLAB_ON when set")
# What a verb's positional files may be, said once: ingest.kernelfile.load_kernels and
# load_profiles read each of these by its content.
FILES_HELP = ("kernel files (.json/.csv), analysis JSON, ncu CSV or .ncu-rep, rocprof CSV "
              "or folder, torch trace")


# --on's default for every verb that declares it here (on_option): a user who works on
# one machine sets it once. The roof line (cli/inputs.py) or a note says it was used.
ON_ENV = "ROOFLAB_ON"
_FROM_ENV: list[str] = []   # the value ROOFLAB_ON gave this command's --on, if it did


def on_option(more: str = ""):
    """The --on option, with `more` said after ON_HELP where a verb's --on differs (plot's
    repeats, compare's is for the chart only): ROOFLAB_ON when not given, catalog names
    and files completed in the shell. A verb whose --on is one value refuses it given
    twice (refuse_repeated_on)."""
    return typer.Option("--on", help=ON_HELP + (f"; {more}" if more else ""),
                        callback=_on_default,
                        autocompletion=complete_on)


def refuse_repeated_on(app, argv: list[str]) -> None:
    """A verb that judges on one roof (its --on is not repeatable, as plot's is) refuses a
    second --on: Click keeps the last of a single option given twice, and `rooflab report
    F --on mi300x --on mi250x` judged on the MI250X without a word (session 32)."""
    words = [a for a in argv if not a.startswith("-")][:2]
    command = app.commands.get(words[0]) if words else None
    subs = getattr(command, "commands", None)
    if isinstance(subs, dict):        # a group: its verb's own (`ai matmul`)
        command = subs.get(words[1]) if len(words) > 1 else None
    verb = " ".join(words if isinstance(subs, dict) else words[:1])
    params = getattr(command, "params", ())
    on = next((p for p in params if "--on" in getattr(p, "opts", ())), None)
    if on is None or on.multiple:
        return
    takes_value = {o for p in params if getattr(p, "param_type_name", "") == "option"
                   and not (getattr(p, "is_flag", False) or getattr(p, "count", False))
                   for o in (*p.opts, *p.secondary_opts)}
    args = argv[:argv.index("--")] if "--" in argv else argv
    given = []
    for i, arg in enumerate(args):
        if i and args[i - 1] in takes_value:
            continue            # another option's value (`--title --on`)
        if arg == "--on" and i + 1 < len(args):
            given.append(args[i + 1])
        elif arg.startswith("--on="):
            given.append(arg[len("--on="):])
    if len(given) > 1:
        from ..errors import InputError

        raise InputError(f"--on given {len(given)} times ({', '.join(given)}): `rooflab "
                         f"{verb}` works on one device: a second --on would replace the "
                         f"first without a word; keep one --on, or {_several_roofs(verb, given)}")


def _several_roofs(verb: str, given: list[str]) -> str:
    """Where the devices of a repeated --on go instead."""
    if verb == "llm":
        return f"compare them with `rooflab llm MODEL --compare {','.join(given)}`"
    if verb.split()[0] in ("train", "scale", "bench", "ai"):
        return "run the command once per device"
    specs = " ".join(f"--on {s}" for s in given)
    return f"draw every roof on one chart with `rooflab plot FILES {specs} -o chart.png`"


def _on_default(ctx: typer.Context, param: typer.CallbackParam, given):
    """--on (_on_given); a name that fits several sizes or boards is said as the verb
    resolves it (say_name_note_now), else when the command has run (say_name_notes)."""
    value = _on_given(ctx, param, given)
    if not ctx.resilient_parsing:
        said: set[str] = set()
        _SAID[:] = [said]      # this command's; the verb's body may run in another thread

        def close() -> None:
            _SAID.clear()
            say_name_notes(value, said)

        ctx.call_on_close(close)
    return value


# the --on names whose note the running command said already (one set while a command
# with --on runs: _on_default sets it, its close clears it)
_SAID: list[set[str]] = []


def say_name_note_now(spec) -> None:
    """The note on which device a family name chose, said when a verb resolves its --on
    (cli/inputs.resolve_on, cli/profiled.report_import), so it stands before the table it
    judges, not after it (`rooflab ncu F --on h100` printed "note: 'h100' is NVIDIA H100
    SXM (also: ...)" under the table, review s33 J2). Only while a command with --on runs,
    once per name: the close-time say_name_notes skips a name said here; the Python API
    says nothing."""
    if _SAID:
        _say_once(spec, _SAID[0])


def say_name_notes(value, said: set[str] | None = None) -> None:
    """A bare family name picks one of several sizes or boards (--on A100: the 80GB SXM
    of four, where LLM-Viewer's nvidia_A100 is the 40 GB card): one `note:` line on
    stderr per device, once per command whatever the spelling (hardware.resolve.name_note;
    review r4 F2): before the output where the verb resolved it (say_name_note_now; `said`
    holds those), else after it ran. stdout, --json's document included, stays as it was;
    a command that failed says only its error (and the note, where it was said before the
    failure)."""
    import sys

    failed = sys.exc_info()[1]   # set while the context closes on an exception
    if failed is not None and getattr(failed, "exit_code", 1) != 0:
        return
    said = set() if said is None else said
    specs = [value] if isinstance(value, str) else list(value or ())
    for spec in dict.fromkeys(specs):
        _say_once(spec, said)


def _say_once(spec, said: set[str]) -> None:
    from ..hardware.resolve import name_note
    from .common import say

    key = str(spec)
    if key in said:
        return
    said.add(key)
    note = name_note(spec)
    if not note:
        return
    # once per device, whatever the spelling: `--compare a100,A100` said two notes on the
    # one A100 80GB SXM (s34 I); a device's key cannot be a spelling ("device:" + its name)
    from ..hardware.catalog import lookup

    device = "device:" + lookup(key.strip()).name
    if device not in said:
        said.add(device)
        say("note", note)


def _on_given(ctx: typer.Context, param: typer.CallbackParam, given):
    """--on as given, else ROOFLAB_ON's value (a one-item list for a repeatable --on). The
    verbs that print a roof line name it there (inputs.on_source); the others say it in a
    note on stderr, so a roof from the environment is never silent."""
    import os

    _FROM_ENV.clear()
    values = given if isinstance(given, (list, tuple)) else [given]
    if not ctx.resilient_parsing and any(v is not None and not v.strip() for v in values):
        # `--on "$GPU"` with GPU unset: ai dropped the roof and report took ROOFLAB_ON's
        # instead, without a word (s38 G)
        from ..errors import InputError

        raise InputError("--on '': the roof is empty (an unset variable?); give a catalog "
                         "name (`rooflab specs list`) or a profile .json, or leave --on out")
    env = os.environ.get(ON_ENV, "").strip()
    if given or not env or ctx.resilient_parsing:   # resilient: completing, not running
        return given
    _check_env_name(env)
    _FROM_ENV.append(env)
    _stamp_env(env)
    if ctx.info_name not in _ROOF_LINE_VERBS:
        from .common import say

        say("note", f"--on {env} (from {ON_ENV})")
    return [env] if param.multiple else env


def _check_env_name(env: str) -> None:
    """A ROOFLAB_ON naming no catalog hardware is refused here, naming the variable: the
    error further on said "unknown hardware 'zzz'" of a word the user never typed (review
    r1 F10). Files, folders and '@Nt' are left to the roof readers, whose errors name the
    path."""
    from pathlib import Path

    from ..errors import HardwareNotFound
    from ..hardware.resolve import looks_like_file

    if "@" in env or looks_like_file(env) or env.lower().endswith(".ncu-rep") or \
            Path(env).exists():
        return
    from ..hardware.catalog import lookup

    try:
        lookup(env)
    except HardwareNotFound as exc:
        raise HardwareNotFound(f"${ON_ENV}={env}: {exc}; fix or unset {ON_ENV}, or pass "
                               f"--on") from None


def _stamp_env(env: str) -> None:
    """Add {"env": {"ROOFLAB_ON": value}} to the generator block every document of this
    command carries (files_generator.generator): its `command` alone re-ran with another roof, or
    none, where the variable is unset (review r1_json F4). No block, no stamp (library
    use)."""
    from ..files_generator import add_generator_env

    add_generator_env(ON_ENV, env)


# The verbs whose roof line already says where --on came from: cli/inputs.py's, and the
# profiler verbs' (profiler_verb: cli/profiled.py words it `from ROOFLAB_ON=X`, review 15v
# F-k), so a note would say it twice.
_ROOF_LINE_VERBS = ("report", "plot", "ncu", "rocprof", "perf", "likwid")


def on_from_env() -> bool:
    """Whether this command's --on came from ROOFLAB_ON."""
    return bool(_FROM_ENV)


def forget_env_on() -> None:
    """Start a command with no --on from ROOFLAB_ON (main(), before the verb's options)."""
    _FROM_ENV.clear()


def env_file_error(message: str) -> str:
    """An error about the roof file ROOFLAB_ON named, said as coming from the variable: the
    file's own error ("hf.json: not a profile or roof file ...") named a path the command
    line never held (s38 G); a catalog name is refused earlier (_check_env_name)."""
    env = _FROM_ENV[0] if _FROM_ENV else ""
    if not env or not message.startswith((f"{env}:", f"{env} ")):
        return message
    return f"${ON_ENV}={message}; fix or unset {ON_ENV}, or pass --on"


def on_source(spec: str) -> str:
    """How the roof line names an --on: '--on T4', or 'ROOFLAB_ON=T4' when the environment
    gave it."""
    return f"{ON_ENV}={spec}" if spec in _FROM_ENV else f"--on {spec}"


def complete_on(incomplete: str) -> list[tuple[str, str]]:
    """Shell completion of --on: catalog names (the space-free ones: a name and its
    aliases, with the device's full name as help) and the roof files in the folder being
    typed (.json, .csv, .ncu-rep)."""
    from pathlib import Path

    from ..hardware.catalog import all_devices

    low = incomplete.lower()
    out = [(n, d.name) for d in all_devices() for n in dict.fromkeys((d.name, *d.aliases))
           if " " not in n and n.lower().startswith(low)]
    folder, _, stem = incomplete.rpartition("/")
    try:
        entries = sorted(Path(folder or ".").iterdir())
    except OSError:
        entries = []
    for entry in entries:
        shown = f"{folder}/{entry.name}" if folder else entry.name
        if entry.name.startswith(stem) and not entry.name.startswith(".") and (
                entry.is_dir() or entry.name.lower().endswith((".json", ".csv", ".ncu-rep"))):
            out.append((shown + ("/" if entry.is_dir() else ""), "folder" if entry.is_dir()
                        else "file"))
    return out


On = Annotated[str | None, on_option()]
OnMany = Annotated[list[str] | None, on_option("repeat for several roofs")]
Files = Annotated[list[str], typer.Argument(help=FILES_HELP)]
Top = Annotated[int, typer.Option("--top", help="show the N longest kernels (0: all)")]
Level = Annotated[str | None, typer.Option(
    "--level", help="one reading: DRAM, L2 or L3: that level's row of the hierarchical "
    "roofline; L1: the cache-aware (CARM) reading, as `rooflab report --level L1` "
    "(default: every level the file has, one row each)")]
JsonOut = Annotated[bool, typer.Option("--json", help="print the JSON vocabulary")]
Output = Annotated[str | None, typer.Option(
    "-o", "--output", help="write a chart (.png/.svg), .json or .csv")]


KernelRe = Annotated[list[str] | None, typer.Option(
    "--kernel", metavar="REGEX",
    help="only kernels whose name matches this regular expression (repeat, or a comma "
         "list: any; '\\,' for a comma in the name)")]
ExcludeRe = Annotated[list[str] | None, typer.Option(
    "--exclude", metavar="REGEX",
    help="leave out kernels whose name matches this regular expression (repeat, or a comma "
         "list: any)")]
PER_LAUNCH_HELP = ("one point per launch of an ncu file's kernels, named 'kernel #ID' (ncu's "
                   "launch ID), instead of one per kernel name with its launches summed")


def patterns(given: list[str] | None) -> tuple[str, ...]:
    """--kernel/--exclude as given (repeated) with each one's comma list split: 'gemm,conv'
    is two expressions. Only the commas outside brackets split, so a quantifier ('a{1,3}'),
    a class ('[,;]'), a group ('(a,b)') or a template name ('k<float, 2>') stays whole; an
    escaped comma ('\\,': re reads it as a comma) never splits. One function for every verb
    that takes them (ncu, rocprof, report, plot, ...), so they match alike."""
    pairs = {")": "(", "]": "[", "}": "{", ">": "<"}
    out: list[str] = []
    for text in given or ():
        opened: list[str] = []
        escaped, start = False, 0
        for i, ch in enumerate(text):
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch in "([{<":
                opened.append(ch)
            elif ch in pairs and pairs[ch] in opened:
                # up to its own opener: a lookbehind's '<' in '(?<=a)' closes with the ')'
                del opened[len(opened) - 1 - opened[::-1].index(pairs[ch]):]
            elif ch == "," and not opened:
                out.append(text[start:i])
                start = i + 1
        out.append(text[start:])
    return tuple(p for p in (x.strip() for x in out) if p)


COUNTER_PRECISION_HELP = ("what the code computes in (fp64, fp32, fp16, bf16), for a FLOP "
                          "event that counts every precision (AMD's): default fp64 (perf), "
                          "the group's (likwid)")


def profiler_verb(app, name: str, help: str, files_help: str,
                  load: Callable[..., ProfileImport], per_launch: bool = False,
                  precision: bool = False, device: bool = False) -> None:
    """Add `rooflab NAME FILE... [--on] [--top] [--level] [--kernel] [--exclude] [--json]
    [-o [--min-share]]` to `app`: a profiler's files read by `load` (which imports its reader when
    called, so registering stays light), then the table, JSON or file every profiler verb
    gives (cli/profiled.py). per_launch: the reader takes per_launch= (ncu), and the verb
    gets `--per-launch` (one point per launch, not per name). precision: the reader takes
    precision= (likwid, perf: AMD's FLOP events count every precision, so only the user can
    say which one the code computes in), and the verb gets `--precision`. device: the
    reader takes device= (--on's text: rocprof tells MI300's 128-B lines from MI200's 64-B
    ones by it when the file does not)."""
    @app.command(name, help=help)
    def verb(
        files: list[str] = typer.Argument(..., help=files_help),
        on: On = None,
        top: Top = 20,
        level: Level = None,
        kernel: KernelRe = None,
        exclude: ExcludeRe = None,
        each: bool = typer.Option(False, "--per-launch", hidden=not per_launch,
                                  help=PER_LAUNCH_HELP),
        prec: str | None = typer.Option(None, "--precision", metavar="PREC",
                                        hidden=not precision, help=COUNTER_PRECISION_HELP),
        json_out: JsonOut = False,
        output: Output = None,
        min_share: str | None = typer.Option(
            None, "--min-share", metavar="PCT", help="with -o x.png/.svg: leave out of the "
            "chart kernels under PCT % of the measured time (as `rooflab plot --min-share`)"),
    ) -> None:
        from ..ingest.profile_import import launch_notes, select_kernels, with_sm_count
        from .common import metric_notes
        from .inputs import refuse_missing, refuse_repeated
        from .plot import parse_min_share
        from .profiled import check_chart_option, check_output, report_import
        from .step_order import warn_step_order

        check_output(output, top, [*files, on])
        # a missing file among several was skipped with exit 0, one file twice was two
        # identical steps: report and plot refused both (s33 C)
        refuse_missing(files)
        refuse_repeated(files)
        share = parse_min_share(min_share)
        check_chart_option(output, "--min-share", min_share)
        if each and not per_launch:
            raise typer.BadParameter(f"`rooflab {name}` has no per-launch view; it is "
                                     f"`rooflab ncu`'s", param_hint="--per-launch")
        if prec is not None and not precision:
            raise typer.BadParameter(f"`rooflab {name}` reads each kernel's precision from "
                                     "the profiler", param_hint="--precision")
        extra = {"per_launch": True} if each else {}
        if precision:
            extra["precision"] = prec
        if device:
            extra["device"] = on
        loaded = load(files, **extra)
        # several files are steps in command-line order, every profiler's alike
        warn_step_order(files)
        imp = select_kernels(loaded, patterns(kernel), patterns(exclude))
        imp = with_sm_count(imp, on)
        # metric_notes speaks of ncu's kernels only (the others' notes say other things)
        imp = replace(imp, notes=imp.notes + metric_notes(imp.kernels, imp.notes)
                      + launch_notes(imp.kernels))
        raise typer.Exit(report_import(imp, on=on, top=top, json_out=json_out, output=output,
                                       level=level, min_share=share))
