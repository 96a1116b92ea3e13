"""Builds the typer app from one module per verb (each has `register(app)`).

The CLI runs `lazy_command()`: a click group that imports a verb's module when the verb is
named, and lists the verbs for `rooflab --help` from cli/verbs.py without importing any
(importing all 17, with numpy and the LLM workloads, cost every `--help` a second of CPU).
`build_app()` builds the whole typer app at once, for tests and tools that walk it."""

from __future__ import annotations

import copy
import importlib
from collections.abc import MutableMapping

import typer
from typer.core import TyperCommand, TyperGroup

from .finite_options import refuse_non_finite
from .metavars import cli_metavars, set_metavar
from .verbs import VERBS

# The verbs' modules, in cli/verbs.py's order: a new verb goes there only (its name, module
# and list line), and both trees, the CLI's lazy one and build_app's, get it (review s20 x2
# F12: a second list here had to be kept in step by a test).
VERB_MODULES = tuple(dict.fromkeys(module for module, _ in VERBS.values()))

HELP = """Roofline analysis: what limits this code on this machine, how far is it from that
limit, and what would move it?

Start with:

  rooflab demo                       this CPU's roof, kernels on it
  rooflab specs list                 datasheet roofs: GPUs, CPUs ...
  rooflab ai matmul 4096 4096 4096   FLOP, bytes, intensity of an op
  rooflab docs                       the manual, a page per topic

`rooflab VERB --help` explains a verb, with examples."""


def build_app() -> typer.Typer:
    """The typer app with every verb registered (all their modules imported)."""
    app = _root_app(Root)
    for name in VERB_MODULES:
        importlib.import_module(f"rooflab.cli.{name}").register(app)
    _reflow_helps(app)
    return app


def lazy_command() -> TyperGroup:
    """The click command of `rooflab`: its options (--version, -q, completion) and every
    verb of cli/verbs.py, each verb's module imported when the verb is named."""
    return typer.main.get_command(_root_app(LazyRoot))


def _root_app(cls: type[TyperGroup] | None = None) -> typer.Typer:
    app = typer.Typer(name="rooflab", help=HELP, no_args_is_help=True,
                      pretty_exceptions_enable=False, add_completion=True,
                      context_settings={"help_option_names": ["-h", "--help"]},
                      **({"cls": cls} if cls else {}))
    app.callback()(_root)
    return app


class Root(TyperGroup):
    """The root group, whose options (--version, -q, the completion ones typer adds after
    making it, --help) get their help-page words (cli/metavars.py) when listed."""

    def get_params(self, ctx):
        params = super().get_params(ctx)
        for param in params:
            set_metavar(param)
        return params


class LazyRoot(Root):
    """The root group: `commands` names every verb and imports one when it is looked up;
    its own help lists them from cli/verbs.py."""

    def __init__(self, **attrs) -> None:
        super().__init__(**attrs)
        self.commands = _Verbs(self._load)
        self._listing = False

    def list_commands(self, ctx) -> list[str]:
        return list(self.commands)

    def get_command(self, ctx, name: str):
        if self._listing and name in VERBS and not self.commands.made(name):
            # the list needs a name and a line, not the verb: no module imported
            return TyperCommand(name, short_help=VERBS[name][1], help=VERBS[name][1])
        return self.commands.get(name)

    def format_help(self, ctx, formatter) -> None:
        self._listing = True
        try:
            return super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def _load(self, name: str):
        one = typer.Typer()
        one.callback()(_no_options)   # a group, whatever the module adds: one command or more
        importlib.import_module(f"rooflab.cli.{VERBS[name][0]}").register(one)
        _reflow_helps(one)
        command = typer.main.get_group(one).commands[name]   # once per process
        _add_quiet(command, next(p for p in self.params if p.name == "quiet"))
        # after _add_quiet: the root's -q copied before the root listed its own options
        # (a verb looked up before parsing, options.refuse_repeated_on) has no word yet
        cli_metavars(command)
        refuse_non_finite(command)   # every float option: no inf, 1e999 or nan
        if any("--run" in p.opts for p in command.params):
            _script_keeps_its_quiet(command)
        return command


class _Verbs(MutableMapping):
    """verb name -> its click command, made on first lookup; iterating (the names, for
    `rooflab --help` and "did you mean") and `in` import nothing."""

    def __init__(self, load) -> None:
        self._load, self._made = load, {}

    def made(self, name: str) -> bool:
        return name in self._made

    def __contains__(self, name) -> bool:
        return name in VERBS or name in self._made

    def __getitem__(self, name: str):
        if name not in self._made:
            if name not in VERBS:
                raise KeyError(name)
            self._made[name] = self._load(name)
        return self._made[name]

    def __setitem__(self, name: str, command) -> None:
        self._made[name] = command

    def __delitem__(self, name: str) -> None:
        del self._made[name]

    def __iter__(self):
        return iter({**dict.fromkeys(VERBS), **self._made})

    def __len__(self) -> int:
        return len(set(VERBS) | set(self._made))


def _no_options() -> None:
    """(the callback that makes a verb's own typer app a group)"""


def _add_quiet(command, root_quiet) -> None:
    """-q/--quiet after the verb is the global one (`rooflab llm ... -q` was refused with
    "No such option", review s20 r5 F9): a copy of the root's option on every command
    and subcommand, which sets quiet as it is parsed (eagerly: before other options'
    notes). A verb with its own -q (probe's: no progress bar) keeps it, and it now also
    silences the notes."""
    own = next((p for p in command.params if {"-q", "--quiet"} & set(p.opts)), None)
    if own is None:
        quiet = copy.copy(root_quiet)
        quiet.expose_value, quiet.is_eager, quiet.callback = False, True, _quiet_callback()
        command.params.append(quiet)
    else:
        own.callback = _quiet_callback(own.callback)
    for sub in getattr(command, "commands", {}).values():
        _add_quiet(sub, root_quiet)


# A -q/--quiet after `--run SCRIPT` is handed through parsing under this name (an option
# no verb has, so the verb takes it as the script's), then given back its own.
_SCRIPT_FLAG = "--rooflab-script-arg="


def _script_keeps_its_quiet(command) -> None:
    """`rooflab torch --run s.py -q` and `bench --run s.py -q`: the arguments after the
    script are its own, -q too, as before every verb took -q (review s20 x2 F10: the
    script silently lost its -q and rooflab went quiet). Other rooflab options after the
    script (--json, --on) stay rooflab's, as they always were; `-q` before it is rooflab's."""
    parse = command.parse_args

    def parse_args(ctx, args: list[str]) -> list[str]:
        parse(ctx, _hide_script_quiet(args))
        ctx.args = [_unhidden(a) for a in ctx.args]
        for name, value in ctx.params.items():   # torch's trace argument may take one
            if isinstance(value, str):
                ctx.params[name] = _unhidden(value)
        return ctx.args

    command.parse_args = parse_args


def _hide_script_quiet(args: list[str]) -> list[str]:
    """args with every -q, --quiet (or a short-flag cluster with q, `-qv`) after the
    `--run` script renamed, so that the parser passes it on as an unknown option."""
    out, script_at = list(args), None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if script_at is None:
            if arg == "--run":
                script_at = i + 1
            elif arg.startswith("--run="):
                script_at = i
        elif i > script_at and (arg == "--quiet" or (
                arg[:1] == "-" and arg[1:2] != "-" and "q" in arg[1:])):
            out[i] = _SCRIPT_FLAG + arg
    return out


def _unhidden(arg: str) -> str:
    return arg.removeprefix(_SCRIPT_FLAG)


def _quiet_callback(before=None):
    def callback(ctx, param, value):
        if before is not None:
            value = before(ctx, param, value)
        if value:
            from .common import set_quiet

            set_quiet(True)
        return value
    return callback


def _reflow_helps(app: typer.Typer) -> None:
    """Every verb's help reflowed (reflow), its list line the first sentence."""
    for info in app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else "") or ""
        info.short_help = info.short_help or _first_sentence(doc)
        info.help = reflow(doc)
    for group in app.registered_groups:   # `rooflab ai`: its own typer app
        group.typer_instance.info.help = reflow(group.typer_instance.info.help or "")
        for info in group.typer_instance.registered_commands:
            doc = info.help or (info.callback.__doc__ if info.callback else "") or ""
            info.short_help = info.short_help or _first_sentence(doc)
            info.help = reflow(doc)


def reflow(text: str) -> str:
    """Help text with its prose lines joined into paragraphs, so rich wraps them to the
    terminal (the source's line breaks, made for ~92 columns, left 'and a / note' ragged
    lines at 80). Indented lines (examples) and list items keep their own lines; example
    blocks get one 'Examples:' line above them."""
    import inspect

    paragraphs: list[list[str]] = []
    for para in _indent_lone_examples(inspect.cleandoc(text)).split("\n\n"):
        for lines in _runs(_joined(para.splitlines())):
            if paragraphs and _examples_only(lines) and _examples_only(paragraphs[-1]):
                paragraphs[-1] += lines        # examples split by blank lines: one block
            else:
                paragraphs.append(lines)
    if len(paragraphs) > 1 and _examples_only(paragraphs[1]):
        paragraphs[:1] = _split_summary(paragraphs[0])
    for i, lines in enumerate(paragraphs):
        if not (i and _examples_only(lines)):
            continue
        if paragraphs[i - 1] == ["Examples:"]:   # the source's own header: no gap under it
            paragraphs[i - 1] = []
            lines.insert(0, "Examples:")
        elif not paragraphs[i - 1][-1].endswith(":"):
            lines.insert(0, "Examples:")
    paragraphs = [p for p in paragraphs if p]
    under = [ln for p in paragraphs[1:] for ln in p][1:]
    if under and not any(ln.strip() and not ln[:1].isspace() for ln in under):
        # typer cleandocs the text under the summary, which took every example's indent
        # when only indented lines followed the first one; an empty paragraph first keeps
        # it (cleandoc then drops the blank lines, not the indent).
        paragraphs.insert(1, [""])
    return "\n\n".join("\n".join(lines) for lines in paragraphs)


def _indent_lone_examples(text: str) -> str:
    """Give back the indent cleandoc took from examples that are all there is under the
    summary (a docstring's common indent is then the examples' own), so they still read as
    examples: every line gets 4 spaces back."""
    summary, _, body = text.partition("\n")
    lines = body.splitlines()
    bare = [ln for ln in lines if ln.strip()]
    if not bare or not all(ln.startswith("rooflab ") or (i and bare[i - 1].endswith("\\"))
                           for i, ln in enumerate(bare)):
        return text
    return "\n".join([summary, *(f"    {ln}" if ln.strip() else ln for ln in lines)])


def _joined(source: list[str]) -> list[str]:
    lines: list[str] = []
    for line in source:
        if (not lines or line[:1].isspace() or line.lstrip()[:2] in ("- ", "* ")
                or lines[-1][:1].isspace()):
            lines.append(line.rstrip())
        else:
            lines[-1] += " " + line.strip()
    return lines


def _runs(lines: list[str]) -> list[list[str]]:
    """A paragraph cut where it turns from prose to examples or back (a summary line with
    an example under it: typer would join the two into one line)."""
    runs: list[list[str]] = []
    for line in lines:
        kind = _examples_only([line]) or bool(runs and _examples_only(runs[-1])
                                               and runs[-1][-1].endswith("\\"))
        if runs and _examples_only(runs[-1]) == kind:
            runs[-1].append(line)
        else:
            runs.append([line])
    return runs


def _split_summary(lines: list[str]) -> list[list[str]]:
    """'First sentence. The rest' -> the summary line, then the rest as prose above the
    examples (so the text under the summary starts with a line at column 0)."""
    head, dot, rest = " ".join(lines).partition(". ")
    return [[head + "."], [rest]] if dot and rest else [lines]


def _examples_only(lines: list[str]) -> bool:
    """Indented `rooflab ...` lines (and their shell continuation lines)."""
    return bool(lines) and all(
        line[:1].isspace() and (line.lstrip().startswith("rooflab")
                                or (i > 0 and lines[i - 1].endswith("\\")))
        for i, line in enumerate(lines))


def _first_sentence(text: str) -> str:
    """The command list shows one line per verb: the help's first sentence, unwrapped."""
    para = " ".join(text.strip().split("\n\n")[0].split())
    head, dot, _ = para.partition(". ")
    return head + ("." if dot else "")


def _print_version(value: bool) -> None:
    if value:
        from .main import print_version

        print_version()
        raise typer.Exit()


def _root(version: bool = typer.Option(False, "--version", "-V", callback=_print_version,
                                       is_eager=True, help="Print the version and exit."),
          quiet: bool = typer.Option(False, "--quiet", "-q", help="No notes or warnings on "
                                     "stderr (a --json document keeps its notes); errors "
                                     "are still said.")
          ) -> None:
    """The options before the verb (`rooflab --version`, `rooflab -q report ...`)."""
    from .common import set_quiet

    set_quiet(quiet)
