"""The docs stay true to the tree: every link resolves, every test they cite exists, and the
architecture's module list names each module of the core and no module that is gone."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "plugins" / "theloop" / "looproom"
DOCS = [ROOT / "README.md", ROOT / "loopside" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKDOWN = MarkdownIt("commonmark").enable("table")
#: A test cited as docs cite one: `e2e/test_talk_e2e.py::test_a_reply_…`.
CITED_TEST = re.compile(r"`((?:tests/)?[a-z_]+/test_\w+\.py)::(\w+)`")


def _named(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _links(doc: Path) -> Iterator[str]:
    for token in MARKDOWN.parse(doc.read_text(encoding="utf-8")):
        for child in token.children or ():
            if child.type == "link_open":
                yield str(child.attrs["href"])


def _anchors(doc: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``doc``: lower case, punctuation gone,
    spaces as hyphens."""
    tokens = MARKDOWN.parse(doc.read_text(encoding="utf-8"))
    found = set()
    for opening, inline in pairwise(tokens):
        if opening.type == "heading_open":
            words = "".join(c.content for c in inline.children or () if c.type != "softbreak")
            kept = "".join(c for c in words.strip().lower() if c.isalnum() or c in " -_")
            found.add(kept.replace(" ", "-"))
    return found


@pytest.mark.parametrize("doc", DOCS, ids=_named)
def test_every_link_in_the_docs_reaches_a_file_and_heading_that_exist(doc: Path) -> None:
    broken = []
    for href in _links(doc):
        if re.match(r"[a-z]+:", href):  # https:, mailto: — off the repository
            continue
        path, _, anchor = href.partition("#")
        target = (doc.parent / path).resolve() if path else doc
        if not target.exists():
            broken.append(f"{href}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{href}: no such heading in {_named(target)}")
    assert broken == []


@pytest.mark.parametrize("doc", DOCS, ids=_named)
def test_every_test_the_docs_cite_exists(doc: Path) -> None:
    missing = []
    for path, name in CITED_TEST.findall(doc.read_text(encoding="utf-8")):
        file = ROOT / (path if path.startswith("tests/") else f"tests/{path}")
        defined = (
            {
                node.name
                for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            if file.is_file()
            else set()
        )
        if name not in defined:
            missing.append(f"{path}::{name}")
    assert missing == []


def _listed_modules() -> set[str]:
    """The modules docs/architecture.md's "Modules, one job each" names, as paths in the core:
    a top-level entry two spaces in, a package's own four spaces in below it."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    tree = text.split("## Modules, one job each", 1)[1].split("```")[1]
    listed, package = set(), ""
    for line in tree.splitlines():
        entry = re.match(r"( {2}| {4})(\S+(?:\.py|/))(?:\s|$)", line)
        if entry is None:
            continue
        indent, name = entry.groups()
        if len(indent) == 2:
            package = name if name.endswith("/") else ""
            listed.add(name)
        elif package:
            listed.add(package + name)
    return listed


def test_the_architecture_names_each_module_of_the_core_and_only_those() -> None:
    every = {path.relative_to(CORE).as_posix() for path in CORE.rglob("*.py")}
    public = {module for module in every if not module.rpartition("/")[2].startswith("_")}
    packages = {module.split("/")[0] + "/" for module in every if "/" in module}
    listed = _listed_modules()
    assert sorted(public - listed) == []
    assert sorted(listed - every - packages) == []
