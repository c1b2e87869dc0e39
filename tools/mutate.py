"""`make mutate`: mutmut over one core module at a time — does a one-token slip fail a test?

    python tools/mutate.py [MODULE ...]     # e.g. inbound/signing.py; none: every one in MODULES

mutmut names a mutant by its file's path from the directory it runs in, less a leading
``src/``; our core is imported as ``looproom`` from ``plugins/theloop/``, so each module runs
in a directory of its own under ``.mutate/`` where ``src`` is a link to ``plugins/theloop``
(and the tests, and what they import from beside the core, link back too). Its
``pyproject.toml`` names the one module to mutate and the unit tests that specify it. mutmut
runs one test process at a time (the machine's cores are shared), each mutant against the
tests that reach its function only. Each run starts afresh: mutmut's cache keeps a verdict
until the mutated function changes, so a survivor a new test kills would still be listed.

A survivor listed in ``EXPLAINED`` (the module, the line and the line as mutated) is printed
with its reason, not counted as a gap; the exit status is 1 while any survivor is not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutate"
LINKS = {
    "src": "plugins/theloop",
    "tests": "tests",
    "loopside": "loopside",
    "demo": "demo",
    "bench": "bench",
    "soak": "soak",
    ".errbot-parts": ".errbot-parts",
    "config.py": "config.py",
}

#: Each module (under looproom/) and the tests that specify it: its unit tests, and for the
#: relay's forms the contract tests that hold them to the real the-loop byte for byte.
MODULES: dict[str, tuple[str, ...]] = {
    "inbound/signing.py": ("tests/unit/inbound/test_signing.py",),
    "decide/authorization.py": ("tests/unit/decide",),
    "decide/judging.py": ("tests/unit/decide",),
    "room/policy.py": (
        "tests/unit/room/test_room_policy.py",
        "tests/unit/room/test_room_policy_edges.py",
        "tests/unit/room/test_room_delivery.py",
        "tests/unit/room/test_event_types.py",
    ),
    "durable/queue.py": (
        "tests/unit/durable/test_queue.py",
        "tests/unit/durable/test_queue_edges.py",
        "tests/unit/durable/test_worker.py",
    ),
    "relay/forms.py": (
        "tests/unit/relay",
        "tests/contract/test_relay_contract.py",
        "tests/contract/test_control_contract.py",
    ),
    # The digest's own tests but its slow ones: the crafted-input, property and document
    # tests take 30 s a run, and a mutant that keeps the reader reading forever (three of
    # _draw's do) runs until mutmut's CPU limit, 30 times the tests' time; the property
    # tests' generated examples would make a verdict change from run to run besides. The
    # CLI's test starts the core from plugins/theloop/, never the mutated copy.
    "digest/_condense.py": (
        "tests/unit/digest/test_digest_condense.py",
        "tests/unit/digest/test_digest_edges.py",
        "tests/unit/digest/test_digest_details.py",
        "tests/unit/digest/test_digest_rendering.py",
        "tests/unit/digest/test_digest_fit.py",
        "tests/unit/digest/test_digest_defects.py",
        "tests/unit/digest/test_digest_traces.py",
    ),
    "digest/_truncate.py": (
        "tests/unit/digest/test_digest_fit.py",
        "tests/unit/room/test_render.py",
        "tests/unit/room/test_budget.py",
    ),
}

_SAFE_CUT = 'if opening >= 0 and text.rfind(">", opening, pos) < 0 and text.find(">", pos) >= 0:'

#: Survivors no input tells apart from the original: (module, line, line as mutated) → why.
EXPLAINED: dict[tuple[str, str, str], str] = {
    (
        "inbound/signing.py",
        'if not hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace")):',
        'if not hmac.compare_digest(expected.encode(), given.encode("UTF-8", "replace")):',
    ): "codec names are not case-sensitive: the same codec",
    (
        "decide/authorization.py",
        "extra = self.roster.get(work_item, frozenset())",
        "extra = self.roster.get(work_item, None)",
    ): "no roster entry either way: `if extra` is false for None as for the empty set",
    (
        "decide/authorization.py",
        "extra = self.roster.get(work_item, frozenset())",
        "extra = self.roster.get(work_item, )",
    ): "the same None as the default: no roster entry is no extra collaborator",
    (
        "decide/authorization.py",
        "return replace(self, collaborators=self.collaborators | extra) if extra else self",
        "return replace(self, collaborators=self.collaborators | extra) if (extra) or True "
        "else self",
    ): "a copy with no collaborator added equals the policy itself (a frozen dataclass)",
    (
        "durable/queue.py",
        "key, \"state='dropped', payload='', last_error='dropped by an admin'\", (), "
        "_OPEN_STATES / )",
        "key, \"state='dropped', payload='', last_error='dropped by an admin'\", (), )",
    ): "the open states are _set's default: naming them or not is the same call",
    (
        "digest/_condense.py",
        'def condense(text: str, limit: int, url: str = "", *, eager: bool = False) -> str:',
        'def condense(text: str, limit: int, url: str = "", *, eager: bool = True) -> str:',
    ): "eager is the reference the lazy reading must equal (test_digest_properties)",
    (
        "digest/_condense.py",
        'def condense(text: str, limit: int, url: str = "", *, eager: bool = False) -> str:',
        'def condense(text: str, limit: int, url: str = "XXXX", *, eager: bool = False) -> str:',
    ): "a URL that is no link is footed as none is: the full text is on the ticket",
    (
        "digest/_condense.py",
        "return _draw(Reader(src, limit, eager), _footer_within(url, limit))",
        "return _draw(Reader(src, limit, None), _footer_within(url, limit))",
    ): "None is read as False: the lazy reading, as by default",
    **{
        ("digest/_condense.py", old, new): why
        for old, new, why in (
            (
                "threshold *= 2",
                "threshold *= 3",
                "how far the reader reads on past what was drawn: it draws the blocks in the "
                "same order either way, and the digest stops at the same one",
            ),
            (
                'run = line.run.slice(*ask.span, drop_marks="*").strip()',
                'run = line.run.slice(*ask.span, drop_marks="XX*XX").strip()',
                "a mark is one of * _ ~, never an X: the same marks are dropped",
            ),
            (
                "run.cut = False  # a sentence ends it, wherever its line was cut",
                "run.cut = None  # a sentence ends it, wherever its line was cut",
                "`cut` is only ever read for its truth, and None is false as False is",
            ),
            (
                "drawn.complete = False",
                "drawn.complete = None",
                "`complete` is only read as `drawn.complete and …`: None is false as False is",
            ),
            (
                "whole = False",
                "whole = None",
                "`whole` is read as `not whole`, and what _add returns as `not _add(…)`: "
                "None is false as False is",
            ),
        )
    },
    (
        "durable/queue.py",
        "self._changed.wait(max(0.0, timeout))",
        "self._changed.wait(max(1.0, timeout))",
    ): "a sub-second wait stretched to a second: only a timing assertion could tell",
    ("durable/queue.py", "self._puts += 1", "self._puts -= 1"): (
        "counting down sweeps at the same puts: -1000 % 1000 is 0 as 1000 % 1000 is"
    ),
    **{
        ("relay/forms.py", "return json.dumps(item, sort_keys=True, ensure_ascii=False)", new): (
            "the queue's payload is read back with json.loads: key order and escaping say the same"
        )
        for new in (
            "return json.dumps(item, sort_keys=None, ensure_ascii=False)",
            "return json.dumps(item, sort_keys=True, ensure_ascii=None)",
            "return json.dumps(item, ensure_ascii=False)",
            "return json.dumps(item, sort_keys=True, )",
            "return json.dumps(item, sort_keys=False, ensure_ascii=False)",
            "return json.dumps(item, sort_keys=True, ensure_ascii=True)",
        )
    },
    **{
        ("relay/forms.py", "return json.dumps(line, sort_keys=True, ensure_ascii=False)", new): (
            "a ledger line is one JSON value: key order and escaping say the same"
        )
        for new in (
            "return json.dumps(line, sort_keys=None, ensure_ascii=False)",
            "return json.dumps(line, sort_keys=True, ensure_ascii=None)",
            "return json.dumps(line, ensure_ascii=False)",
            "return json.dumps(line, sort_keys=True, )",
            "return json.dumps(line, sort_keys=False, ensure_ascii=False)",
            "return json.dumps(line, sort_keys=True, ensure_ascii=True)",
        )
    },
    **{
        ("relay/forms.py", f'def {name}(member: str, login: str = "") -> {ret}:', new): (
            "every caller passes the login: the default is never used"
        )
        for name, ret, new in (
            (
                "actor",
                "dict[str, str]",
                'def actor(member: str, login: str = "XXXX") -> dict[str, str]:',
            ),
            ("who", "str", 'def who(member: str, login: str = "XXXX") -> str:'),
        )
    },
    **{
        (
            "relay/forms.py",
            '"actor": actor(decision["member"], decision.get("login", "")),',
            new,
        ): "no login stored reads as none either way: actor adds a GitHub id only for one"
        for new in (
            '"actor": actor(decision["member"], decision.get("login", None)),',
            '"actor": actor(decision["member"], decision.get("login", )),',
        )
    },
    (
        "relay/forms.py",
        'hit = next((phrase for phrase in CHANGE_PHRASES if phrase in said), "")',
        "hit = next((phrase for phrase in CHANGE_PHRASES if phrase in said), None)",
    ): "`if not hit` reads None as it reads the empty string",
    (
        "relay/forms.py",
        'keyword = (keywords or Keywords()).of(self.command) if self.command else ""',
        'keyword = (keywords or Keywords()).of(self.command) if (self.command) or True else ""',
    ): "a comment with no command: Keywords.of('') is '' too",
    **{
        ("relay/forms.py", old, new): "Comment.said strips what a comment opens with"
        for old, new in (
            ('return f" {said}" if said else ""', 'return f" {said}" if (said) or True else ""'),
            (
                'return "\\n\\n" + "\\n".join(decision.rows) if decision.rows else ""',
                'return "\\n\\n" + "\\n".join(decision.rows) if (decision.rows) or True else ""',
            ),
            (
                'return APPROVED + (f"\\n\\n{said}" if said else "")',
                'return APPROVED + (f"\\n\\n{said}" if (said) or True else "")',
            ),
        )
    },
    **{
        ("decide/judging.py", old, new): why
        for old, new, why in (
            (
                'thread: str = "",',
                'thread: str = "XXXX",',
                "both paths pass the thread: the default is never used",
            ),
            (
                'kind="",',
                "kind=None,",
                "every kind's check sets the kind: the draft's is never read",
            ),
            (
                'kind="",',
                'kind="XXXX",',
                "every kind's check sets the kind: the draft's is never read",
            ),
            (
                "work_item = spelling(work_item) if work_item else work_item",
                "work_item = spelling(work_item) if (work_item) or True else work_item",
                "no work item is spelled as given: the room keeps nothing under no name",
            ),
            (
                "reply = grammar.Command(kinds.REPLY, words=words)",
                "reply = grammar.Command(None, words=words)",
                "the kind is chosen already: the reply's check reads its words, not its verb",
            ),
            (
                "return _check(kind, reply, state, replace(base, files=said.attached), policy)",
                "return _check(kind, reply, None, replace(base, files=said.attached), policy)",
                "a reply goes to the session whatever is open: its check reads no state",
            ),
            (
                "parsed = grammar.Command(kinds.ANSWER, words=words)",
                "parsed = grammar.Command(None, words=words)",
                "the kind is chosen already: the answer's check reads its words, not its verb",
            ),
            (
                'return where.work_item, ""',
                'return where.work_item, "XXXX"',
                "why there is no work item is read only when there is none",
            ),
            (
                'return str(named), ""',
                'return str(named), "XXXX"',
                "why there is no work item is read only when there is none",
            ),
            (
                'locate(press.channel, press.thread_ts) if press.thread_ts else ""',
                'locate(press.channel, press.thread_ts) if (press.thread_ts) or True else ""',
                'no posted message has an empty ts: locating one finds nothing, the same ""',
            ),
        )
    },
    ("room/policy.py", 'return ""', 'return "XXXX"'): (
        "ready_for_review_node: a name no gate has is read as none — gate-collapse looks it up"
    ),
    (
        "room/policy.py",
        'if str(event.detail.get("operatorDoc") or "").lower() in ("1", "true", "yes"):',
        'if str(event.detail.get("operatorDoc") or "XXXX").lower() in ("1", "true", "yes"):',
    ): "an absent flag read as another word that is not a yes is still not a yes",
    (
        "room/policy.py",
        'return str(event.detail.get("terminal") or "").lower() in ("1", "true", "yes")',
        'return str(event.detail.get("terminal") or "XXXX").lower() in ("1", "true", "yes")',
    ): "an absent flag read as another word that is not a yes is still not a yes",
    (
        "room/policy.py",
        "progress = event_types.of(event).step == PROGRESS",
        "progress = None",
    ): "the one row whose step is progress is phase.progress, whose name ends in .progress",
    **{
        ("digest/_truncate.py", old, new): why
        for old, new, why in (
            (
                "for _ in range(4):  # the note's length depends on the count it names",
                "for _ in range(5):  # the note's length depends on the count it names",
                "the kept length settles within two passes; a fifth changes nothing",
            ),
            (
                "if keep + len(note) <= limit:",
                "if keep + len(note) < limit:",
                "at equality the next pass computes the same keep: the loop is at its fixpoint",
            ),
            (
                'return text[: limit - 1].rstrip() + "…" if limit > 1 else "…"',
                'return text[: limit - 1].rstrip() + "…" if (limit > 1) or True else "…"',
                'at a limit of 1 the head is text[:0]: "" + "…" is "…"',
            ),
            (
                'return text[: limit - 1].rstrip() + "…" if limit > 1 else "…"',
                'return text[: limit - 1].rstrip() + "…" if limit >= 1 else "…"',
                'at a limit of 1 the head is text[:0]: "" + "…" is "…"',
            ),
            (
                'opening = text.rfind("<", 0, pos)',
                'opening = text.rfind("<", None, pos)',
                "a start of None is a start of 0",
            ),
            (
                _SAFE_CUT,
                _SAFE_CUT.replace(
                    'text.rfind(">", opening, pos) < 0', 'text.find(">", opening, pos) < 0'
                ),
                "find and rfind are both -1 exactly when there is none",
            ),
            (
                _SAFE_CUT,
                _SAFE_CUT.replace(
                    'text.rfind(">", opening, pos) < 0', 'text.rfind(">", opening, pos) <= 0'
                ),
                "a '>' after the '<' at `opening` is at 1 or later: the search is -1 or over 0",
            ),
            (
                _SAFE_CUT,
                _SAFE_CUT.replace(
                    'text.rfind(">", opening, pos) < 0', 'text.rfind(">", opening, pos) < 1'
                ),
                "a '>' after the '<' at `opening` is at 1 or later: the search is -1 or over 0",
            ),
            (
                _SAFE_CUT,
                _SAFE_CUT.replace('text.find(">", pos) >= 0', 'text.rfind(">", pos) >= 0'),
                "find and rfind are both -1 exactly when there is none",
            ),
            (
                _SAFE_CUT,
                _SAFE_CUT.replace('text.find(">", pos) >= 0', 'text.find(">", pos) > 0'),
                "the cut is at 1 or later here (a keep of 0 returned before): found is over 0",
            ),
            (
                _SAFE_CUT,
                _SAFE_CUT.replace('text.find(">", pos) >= 0', 'text.find(">", pos) >= 1'),
                "the cut is at 1 or later here (a keep of 0 returned before): found is over 0",
            ),
        )
    },
}

_PYPROJECT = """\
# Written by tools/mutate.py for one run of mutmut; not the project's own.
[tool.pytest.ini_options]
pythonpath = ["src", "loopside", "."]
addopts = "-ra --strict-markers -p errbot.backends.test -p no:cacheprovider"
markers = ["e2e: starts a real errbot process against loopback fakes"]

[tool.mutmut]
source_paths = ["src/looproom"]
only_mutate = {only}
pytest_add_cli_args_test_selection = {tests}
also_copy = ["loopside", "demo", "bench", "soak", ".errbot-parts", "config.py"]
"""


def stage(module: str) -> Path:
    """The directory mutmut runs ``module`` in: links to the tree and its own settings."""
    here = WORK / module.replace("/", "-").removesuffix(".py")
    here.mkdir(parents=True, exist_ok=True)
    for name, target in LINKS.items():
        link = here / name
        if not link.is_symlink():
            link.symlink_to(os.path.relpath(ROOT / target, here))
    settings = _PYPROJECT.format(
        only=json.dumps([f"src/looproom/{module}"]), tests=json.dumps(list(MODULES[module]))
    )
    path = here / "pyproject.toml"
    if not path.exists() or path.read_text(encoding="utf-8") != settings:
        path.write_text(settings, encoding="utf-8")
    return here


_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|WHERE|CREATE|ALTER|VALUES)\b", re.IGNORECASE)
_QUOTED = re.compile(r"'[^']*'")


#: Modules whose string literals are SQL, or pieces of it, but for messages their tests read.
_SQL_MODULES = ("durable/queue.py",)


def sql_case_only(module: str, old: str, new: str) -> bool:
    """A mutant that only changes the case of SQL outside its quoted values: SQLite reads
    keywords and names in any case, so no input tells the two apart."""
    return (
        old != new
        and old.lower() == new.lower()
        and (module in _SQL_MODULES or bool(_SQL.search(old)))
        and _QUOTED.findall(old) == _QUOTED.findall(new)
    )


def mutmut(here: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mutmut", *args],
        cwd=here,
        capture_output=True,
        text=True,
        check=False,
    )
    if check and done.returncode != 0:
        raise SystemExit(f"mutmut {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout if check else done.stdout + done.stderr


def survivors(here: Path) -> list[tuple[str, str, str, str]]:
    """Each mutant no test failed on (survived, or reached by no test): its name and status,
    the line it changed and that line as mutated."""
    found = []
    for line in mutmut(here, "results").splitlines():
        name, _, status = line.strip().rpartition(": ")
        if status not in ("survived", "no tests"):
            continue
        diff = mutmut(here, "show", name).splitlines()
        old = [d[1:].strip() for d in diff if d.startswith("-") and not d.startswith("---")]
        new = [d[1:].strip() for d in diff if d.startswith("+") and not d.startswith("+++")]
        found.append((name, status, " / ".join(old), " / ".join(new)))
    return found


def run(module: str) -> int:
    """Mutate ``module``, print its figures and survivors; how many are unexplained."""
    here = stage(module)
    shutil.rmtree(here / "mutants", ignore_errors=True)
    started = time.monotonic()
    ran = mutmut(here, "run", "--max-children", "1", check=False)
    seconds = time.monotonic() - started
    mutmut(here, "export-cicd-stats")
    stats = json.loads((here / "mutants" / "mutmut-cicd-stats.json").read_text(encoding="utf-8"))
    if stats["total"] and not any(stats[k] for k in ("killed", "survived", "no_tests")):
        # mutmut ran no mutant: its first run of the tests failed (an import, a setup).
        raise SystemExit(f"{module}: mutmut ran no mutant; its output ends:\n{ran[-3000:]}")
    killed = stats["killed"] + stats["timeout"] + stats["segfault"]
    print(
        f"{module}: {stats['total']} mutants, {killed} killed, {stats['survived']} survived, "
        f"{stats['no_tests']} reached by no test, {stats['suspicious']} suspicious "
        f"({seconds:.0f} s)"
    )
    unexplained = 0
    for name, status, old, new in survivors(here):
        reason = EXPLAINED.get((module, old, new))
        if reason is None and sql_case_only(module, old, new):
            reason = "SQL's keywords and names are read in any case"
        short = name.rpartition(".")[2]  # the function's mutant; the module is said above
        said = "explained" if reason else "SURVIVED" if status == "survived" else "NO TEST"
        print(f"  {said} {short}\n    - {old}\n    + {new}")
        if reason:
            print(f"    ({reason})")
        else:
            unexplained += 1
    return unexplained


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE", help=", ".join(MODULES))
    chosen = parser.parse_args(argv).modules or list(MODULES)
    unknown = [module for module in chosen if module not in MODULES]
    if unknown:
        parser.error(f"not a module under mutation: {', '.join(unknown)} (see MODULES)")
    unexplained = sum(run(module) for module in chosen)
    print(f"unexplained survivors: {unexplained}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
