"""Which command wrote a document: the "generator" block ({"rooflab": version, "command":
argv, "env": the variables it read}) every JSON a command writes ends with, and the shell
line a .md/.html footer prints from it. Split from files.py, whose JSON writer stamps it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# Who wrote the documents of this command: {"rooflab": version, "command": argv}, set by
# the CLI's entry point (cli/main.py) for the one command it runs, None otherwise (library
# use). The version and the command line only, no time or host: the same command on the
# same input still gives the same bytes.
_GENERATOR: list[dict[str, Any]] = []


def set_generator(argv: Sequence[str] | None) -> None:
    """Name the command whose documents follow (None: no command, nothing stamped)."""
    from . import __version__

    _GENERATOR[:] = [] if argv is None else [
        {"rooflab": __version__, "command": ["rooflab", *map(str, argv)]}]


def generator() -> dict[str, Any] | None:
    """The running command's generator block ({"rooflab": version, "command": argv})."""
    return dict(_GENERATOR[0]) if _GENERATOR else None


def add_generator_env(name: str, value: str) -> None:
    """Record an environment variable the running command read in place of an option
    (ROOFLAB_ON for --on) in its generator block, as {"env": {name: value}}: the command
    alone re-runs with another roof, or none, where the variable is unset (review r1_json
    F4). No command running (library use): nothing to record."""
    if _GENERATOR:
        block = _GENERATOR[0]
        _GENERATOR[0] = {**block, "env": {**block.get("env", {}), name: str(value)}}


def command_line(gen: Mapping[str, Any]) -> str:
    """The generator's command as one shell line (arguments with spaces quoted), behind
    the environment it read ('ROOFLAB_ON=H200 rooflab report k.json'), so that the line a
    .md/.html footer prints re-runs as written (review r1_json F4)."""
    import shlex

    env = [f"{k}={shlex.quote(str(v))}" for k, v in (gen.get("env") or {}).items()]
    return " ".join([*env, shlex.join(str(a) for a in gen.get("command") or ())])


def stamped(obj: Any) -> Any:
    """A JSON document (a top-level object) with the generator block added last, when a
    command runs and the document has none; other values as they are."""
    gen = generator()
    if gen is None or not isinstance(obj, dict) or "generator" in obj:
        return obj
    return {**obj, "generator": gen}
