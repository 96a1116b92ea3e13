"""`rooflab docs --json` (s36 A): the manual's topics for a script, as every other verb that
lists something (`llm list`, `bench --list`, `specs list`) offers them; before, `docs` took
no --json ("No such option"), so a script had to parse the listing's columns."""

from __future__ import annotations

from pathlib import Path

from cli_inproc import json_of, one_line_error


def test_docs_json_lists_the_user_topics_with_title_and_path(capsys):
    """The listing's topics, each with its page's first line as the title and its file:
    json's title is its heading "# Scripting against rooflab's files"; CONTRACTS, an
    engineers' page the listing leaves out, is left out here too."""
    doc = json_of(capsys, ["docs", "--json"])
    names = [t["name"] for t in doc["topics"]]
    assert names == sorted(names, key=str.lower)
    assert {"json", "llm", "train", "demo"} <= set(names)
    assert "CONTRACTS" not in names
    by_name = {t["name"]: t for t in doc["topics"]}
    assert by_name["json"]["title"] == "Scripting against rooflab's files"
    page = Path(by_name["json"]["path"])
    assert page.name == "json.md" and page.is_file()
    assert Path(doc["folder"]) == page.parent
    assert doc["schema_version"] == 2 and doc["generator"]["command"][1:] == ["docs", "--json"]


def test_docs_topic_json_holds_the_page_or_its_section(capsys):
    """`docs json#errors --json`: the section the plain command prints into a pipe, from its
    heading "## Errors name the file, ..." to the next heading as high, with the page's
    title and file."""
    doc = json_of(capsys, ["docs", "json#errors", "--json"])
    assert doc["topic"] == "json"
    assert doc["title"] == "Scripting against rooflab's files"
    assert Path(doc["path"]).name == "json.md"
    assert doc["markdown"].startswith("## Errors name the file, the place and the field\n")
    assert "\n## " not in doc["markdown"]
    whole = json_of(capsys, ["docs", "train", "--json"])
    assert whole["markdown"] == Path(whole["path"]).read_text(encoding="utf-8")


def test_docs_json_unknown_topic_is_one_error_line(capsys):
    """An unknown topic under --json is still the one-line error and exit 2 (and the error
    document on stdout, as every verb's --json)."""
    import json

    from rooflab.cli.main import main

    assert main(["docs", "nosuch", "--json"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("error: no docs topic 'nosuch'")
    assert json.loads(out)["error"]["kind"] == "input"
    assert one_line_error(capsys, ["docs", "nosuch"]).startswith("error: no docs topic")
