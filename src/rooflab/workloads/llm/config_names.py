"""Where a model's config comes from: a config.json path (or its folder), a llama.cpp
.gguf file (gguf_config), or a bundled config by a forgiving name ('TinyLlama-1.1B',
'meta-llama/Llama-2-7b-hf', 'mixtral').
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

from ...errors import InputError, ParseError
from ...files import decode_json, json_end_hint, read_text
from .config_parse import parse_config
from .model_config import ModelConfig

# A model size in a name: 7b, 1.1b, 8x7b, 124m; or a size word (gpt2-medium).
SIZE_RE = re.compile(r"\d+(x\d+)?(\.\d+)?[bm]")
SIZE_WORDS = frozenset({"tiny", "mini", "small", "base", "medium", "large", "xl", "xxl"})


def _configs_root():
    """The folder of bundled configs inside the installed package."""
    return resources.files("rooflab.workloads") / "configs"


def bundled_names() -> tuple[str, ...]:
    """Names of the configs shipped with rooflab (written from the published config.json)."""
    return tuple(sorted(p.name[:-5] for p in _configs_root().iterdir()
                        if p.name.endswith(".json")))


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(" ", "-").split("/")[-1]


def load_config(spec: str) -> ModelConfig:
    """A config.json path, or a bundled name (forgiving: 'TinyLlama-1.1B', 'llama-2-7b')."""
    if not spec.strip():
        # Path('') is '.', which answered "is a directory with no config.json in it" (s38 G)
        raise InputError(f"the model is empty ({spec!r}: an unset variable?); give a "
                         f"config.json path, a .gguf file or a bundled name (`rooflab llm "
                         f"list`)")
    # '~/models/config.json' quoted (or from a notebook) reaches here unexpanded; the
    # kernel readers expand it (user_path), so `llm` does too (s38 G)
    path = Path(spec).expanduser()
    if _is_gguf(path):
        from .gguf_config import load_gguf  # the gguf extra, only for .gguf files

        return load_gguf(path)
    # a pipe (`<(jq . config.json)`, /dev/stdin) is no regular file but is read as one
    # (s38 G: it was "not a file or a bundled config")
    piped = path.exists() and not path.is_file() and not path.is_dir()
    if spec.endswith(".json") or path.is_file() or piped or (path / "config.json").is_file():
        return _load_file(path / "config.json" if path.is_dir() else path)
    name, variant = _bundled_match(spec, path)
    data = json.loads((_configs_root() / f"{name}.json").read_text())
    cfg = parse_config(data, name=name, where=f"bundled config {name}")
    if variant:
        cfg = cfg.with_(notes=cfg.notes + (
            f"'{spec}' read as the bundled {name} (a variant of it: chat/instruct "
            f"tunes share its architecture fields); for another layout pass its "
            f"config.json",))
    return cfg


def bundled_name(spec: str) -> str | None:
    """The bundled config `spec` names ('llama-2-7b', 'TinyLlama-1.1B'), or None: for a
    reader's "file not found" when a model's name is given where a file goes (review s33
    E: `rooflab choose llama-2-7b` said only "file not found")."""
    from ...errors import RooflabError

    if not spec or "/" in spec or "\\" in spec or Path(spec).suffix.lower() in _DATA_SUFFIXES:
        return None
    try:
        return _bundled_match(spec, Path(spec))[0]
    except RooflabError:
        return None


# what a kernel or profile file is named: never read as a model's name
_DATA_SUFFIXES = frozenset({".json", ".csv", ".gz", ".txt", ".ncu-rep", ".md", ".html"})


def _is_gguf(path: Path) -> bool:
    """A llama.cpp model file: named .gguf, or a file that starts with GGUF's magic."""
    if path.suffix.lower() == ".gguf":
        return True
    if not path.is_file():   # a pipe read here would lose its first bytes to the sniff
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:      # not a file (a bundled name, a folder): not a GGUF
        return False


def _load_file(path: Path) -> ModelConfig:
    """A config.json on disk, named for its folder (or its own stem when not config.json)."""
    if not path.exists():
        raise ParseError("config file not found", path=str(path))
    text = read_text(path)
    try:
        data = decode_json(text, path)
    except json.JSONDecodeError as exc:
        start = text.lstrip("\ufeff \t\r\n")[:1]
        # a CSV or a log given as a model ("not valid JSON: Expecting value" said nothing
        # of what the file is or what goes here; s36 B)
        other = ("; a model's config.json is one JSON object ({...}): is it the right file?"
                 if start and start not in "{[" else json_end_hint(exc, text))
        raise ParseError(f"not valid JSON: {exc.msg}{other}", path=str(path),
                         line=exc.lineno) from None
    try:
        return parse_config(data, name=path.parent.name if path.name == "config.json"
                            else path.stem, where=str(path))
    except InputError as exc:
        raise _at_line(exc, text, str(path)) from None


def _at_line(exc: InputError, text: str, where: str) -> InputError:
    """A field's error with the line the field is on ('config.json:4: field
    'hidden_size' ...'), and its path, line and field for the --json error document; as it
    was when the field is not known or not found (review s33 E)."""
    msg = str(exc)
    field = exc.field
    if not field or "." in field or not msg.startswith(f"{where}: "):
        return exc
    key = f'"{field}"'
    line = next((n for n, s in enumerate(text.splitlines(), 1) if key in s), None)
    if line is None:
        return exc
    return InputError(f"{where}:{line}: {msg[len(where) + 2:]}", path=where, line=line,
                      field=field)


def _bundled_match(spec: str, path: Path) -> tuple[str, bool]:
    """The one bundled config `spec` names, and whether it names a variant of it (a repo id
    with a tune suffix or an org prefix); an error naming the closest ones otherwise."""
    names = bundled_names()
    key = _normalise(spec)
    # A name without its size ('tinyllama', 'mixtral') finds the one bundled size; a
    # longer name is another model ('deepseek-v2' is not deepseek-v2-lite: 236 B vs 15.7 B).
    hits = [n for n in names if n == key] or [
        n for n in names if n.startswith(key + "-")
        and all(SIZE_RE.fullmatch(part) for part in n[len(key) + 1:].split("-"))]
    variant = None if hits else _variant_of(key, names)
    if variant:
        return variant, True
    if len(hits) == 1:
        return hits[0], False
    if path.is_dir():   # a model folder without its config.json
        raise ParseError("is a directory with no config.json in it; give the model folder "
                         "that holds config.json, or the file's path", path=str(path))
    import difflib

    from .vision_hint import vision_hint

    vision = vision_hint(spec)   # a CNN's name is near no LLM's (review s28 R3 F13)
    close = [] if vision else difflib.get_close_matches(key, names, n=3, cutoff=0.3)
    hint = f" (closest: {', '.join(close)})" if close else ""
    what = "matches several" if hits else "is not a file or a bundled config"
    raise InputError(f"'{spec}' {what}{hint}; `rooflab llm list` shows the bundled "
                     f"names, or pass the path of a config.json{vision}")


def _variant_of(key: str, names: tuple[str, ...]) -> str | None:
    """The bundled config a Hugging Face repo id names with a suffix or an org prefix:
    meta-llama/Llama-2-7b-hf, Qwen/Qwen2.5-7B-Instruct, mistralai/Mixtral-8x7B-v0.1,
    meta-llama/Meta-Llama-3-8B. The longest bundled name followed by '-' wins, so
    llama-2-70b-chat-hf is llama-2-70b, never llama-2-7b."""
    for k in (key, key.removeprefix("meta-")):
        found = [n for n in names if k == n
                 or (k.startswith(n + "-") and not _names_a_size(k[len(n) + 1:]))]
        if found:
            return max(found, key=len)
    return None


def _names_a_size(suffix: str) -> bool:
    """Whether a repo id's suffix names another size of the model (gpt2-medium, a '-1.5b'
    part), which has other fields, rather than a tune of the same one (-instruct, -hf)."""
    return any(part in SIZE_WORDS or SIZE_RE.fullmatch(part) for part in suffix.split("-"))
