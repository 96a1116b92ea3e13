"""README.md's tour runs top to bottom in one folder, so no file one verb writes there is
overwritten by another verb's output further down. `rooflab probe --quick --threads 1,all
--cpus 0,1 -o t.json` wrote the thread-scaling profile that `--on t.json@1t` reads, and
`rooflab train ... --json > t.json && rooflab choose t.json` later replaced it with a train
document: a new user walking the tour lost the profile (`--on t.json@1t` then failed) and
read two different things called t.json (session 34, helper D)."""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tour() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = text[text.index("## A tour"):]
    tour = tour[tour.index("```bash\n") + 8:]
    return tour[:tour.index("```")].splitlines()


def _writers(lines: list[str]) -> dict[str, set[str]]:
    """Each file the lines write (`-o FILE`, `> FILE`) -> the verbs that write it."""
    found: dict[str, set[str]] = defaultdict(set)
    for line in lines:
        command = re.split(r"\s{2,}#\s", line)[0]
        for part in command.split("&&"):
            words = part.split()
            if len(words) < 2 or words[0] != "rooflab":
                continue
            verb = next(w for w in words[1:] if not w.startswith("-"))
            for out in re.findall(r"(?:^|\s)(?:-o|>)\s+(\S+)", part):
                found[out].add(verb)
    return found


def test_the_checker_sees_a_clash():
    lines = ["rooflab probe --quick -o t.json   # a profile",
             "rooflab train x --json > t.json && rooflab choose t.json"]
    assert _writers(lines) == {"t.json": {"probe", "train"}}


def test_no_file_of_the_tour_is_written_by_two_verbs():
    writers = _writers(_tour())
    # the tour writes me.json, t.json, edison.json, d.json, comm.json ... (19 files)
    assert {"me.json", "t.json", "d.json", "comm.json"} <= set(writers) and len(writers) > 15
    assert {f: v for f, v in writers.items() if len(v) > 1} == {}
    assert writers["t.json"] == {"probe"}
