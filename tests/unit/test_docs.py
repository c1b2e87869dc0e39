"""The docs stay true to the tree: every link resolves, every test and module they name
exists, the README's layout names each folder of code, and the architecture's module list
names each module of the core and no module that is gone."""

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
CITED_TEST = re.compile(r"`((?:tests/)?(?:[a-z_]+/)+test_\w+\.py)::(\w+)`")


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


#: Where a path the docs name is read from: the repository, the plugin, the core, the tests.
PATH_ROOTS = (ROOT, ROOT / "plugins" / "theloop", CORE, ROOT / "tests")
#: A file path in prose or code (``room/policy.py``), not one inside a URL or a diff header.
NAMED_PATH = re.compile(r"(?<![\w/.:-])((?:[a-z_]+/)+[a-z_0-9]+\.py)\b")
NAMED_MODULE = re.compile(r"\blooproom((?:\.[a-z_]+)+)")


def _module_exists(dotted: str) -> bool:
    """Whether ``looproom<dotted>`` is a module, or a name one defines (``.events.Event``)."""
    parts = dotted.strip(".").split(".")
    path = CORE.joinpath(*parts)
    if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
        return True
    module, name = CORE.joinpath(*parts[:-1]), parts[-1]
    source = module.with_suffix(".py")
    if not source.is_file():
        source = module / "__init__.py"
    if not source.is_file():
        return False
    defined = rf"^(?:def|class)\s+{name}\b|^{name}\b[^=\n]*=|^from .* import .*\b{name}\b"
    return re.search(defined, source.read_text(encoding="utf-8"), re.MULTILINE) is not None


@pytest.mark.parametrize("doc", DOCS, ids=_named)
def test_every_module_the_docs_name_exists(doc: Path) -> None:
    gone = []
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith(("--- a/", "+++ b/")):
            continue
        for path in NAMED_PATH.findall(line):
            if not any((root / path).is_file() for root in PATH_ROOTS):
                gone.append(path)
        gone += [f"looproom{d}" for d in NAMED_MODULE.findall(line) if not _module_exists(d)]
    assert gone == []


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


def test_the_readme_layout_names_each_folder_of_the_repository_and_only_what_exists() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^\| `([^`]+)`", layout, re.MULTILINE))
    named |= set(re.findall(r"^\| `[^`]+`, `([^`]+)`", layout, re.MULTILINE))
    assert sorted(path for path in named if not (ROOT / path).exists()) == []
    tops = {path.split("/")[0] + "/" for path in named}
    folders = {
        path.name + "/"
        for path in ROOT.iterdir()
        if path.is_dir() and not path.name.startswith(".") and any(path.rglob("*.py"))
    }
    assert sorted(folders - tops - {"data/"}) == []  # data/: what a local run writes
