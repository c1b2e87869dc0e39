"""``theloop_hook`` as the-loop itself loads and runs it.

the-loop's own extension loader reads ``routing.graph.hooks`` from a CLI config built from
the shipped snippet, imports our module, compiles its shipped loops with it, and runs the
attachment in a real ``HookContext`` of the default loop's gates. What the hook sends is
compared with what the-loop's own ``notify`` (and its runtime's lifecycle) publishes for the
same context, captured through the seam the-loop's own tests patch.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import yaml
from the_loop.cli_config import load_cli_config
from the_loop.graph.chain import run_chain
from the_loop.graph.contract import HookContext
from the_loop.graph.extensions import clear_module_cache, read_declaration
from the_loop.graph.model import SHIPPED_LOOPS, Graph, load_graph
from the_loop.graph.runtime import Runtime, _degradations
from the_loop.graph.state import WorkItemState

from tests.e2e.botproc import BotProcess

HOOK = "x-theloop-notify"
DEFAULT_LOOP = "pdlc-work-item-loop"
SNIPPET = Path(__file__).resolve().parents[2] / "loopside" / "the-loop-hooks.yaml"
REF, ITEM = "github:acme/api#7", "issue-7"
REQUIREMENTS = """---
status: draft
---
# Requirements: a thing

## Requirements

1. WHEN a thing happens THEN the system SHALL <do it> & say so.

## Security considerations

None.
"""


def _runs_notify(chain: Any) -> bool:
    return any(
        entry == "notify" or (isinstance(entry, Mapping) and entry.get("hook") == "notify")
        for entry in chain
    )


def gates_of_the_default_loop() -> set[str]:
    """Every node of the shipped default loop where the-loop's own ``notify`` runs."""
    graph = load_graph(name=DEFAULT_LOOP)
    return {n.id for n in graph.nodes.values() if _runs_notify((*n.entry, *n.exit))}


@pytest.fixture(autouse=True)
def spool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the hook keeps what a down bot cannot take: this test's, never the user's."""
    monkeypatch.setenv("THELOOP_SPOOL_DIR", str(tmp_path / "spool"))
    return tmp_path / "spool"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout with the work item's spec directory and a requirements artifact."""
    spec = tmp_path / "repo" / "docs" / "specs" / ITEM
    spec.mkdir(parents=True)
    (spec / "requirements.md").write_text(REQUIREMENTS, encoding="utf-8")
    return tmp_path / "repo"


@pytest.fixture
def cli_config(tmp_path: Path) -> dict[str, Any]:
    """the-loop's CLI config: the shipped snippet, loaded by the-loop's own loader."""
    path = tmp_path / "cli-config.yaml"
    path.write_text(SNIPPET.read_text(encoding="utf-8"), encoding="utf-8")
    clear_module_cache()  # so the loader really executes the module in this test
    return load_cli_config(path)


@pytest.fixture
def graph(cli_config: dict[str, Any], repo: Path) -> Graph:
    return load_graph(repo=repo, name=DEFAULT_LOOP, declaration=read_declaration(cli_config))


@pytest.fixture
def hook_module(graph: Graph) -> ModuleType:
    return sys.modules[graph.hook_for(HOOK).__module__]


def _context(graph: Graph, repo: Path, node_id: str, boundary: str = "entry") -> HookContext:
    """The context the runtime builds (``Runtime._context``) for ``node_id``."""
    runtime = Runtime(repo, graph=graph, config={})
    node = graph.node(node_id)
    return HookContext(
        work_item=runtime.work_item(ITEM, ref=REF),
        node=node.as_mapping(),
        boundary=boundary,
        repo=repo,
        config=runtime.config,
        graph=graph,
    )


def _attached(graph: Graph, node_id: str, boundary: str = "entry") -> list[Any]:
    chain = getattr(graph.node(node_id), boundary)
    return [spec for spec in chain if isinstance(spec, Mapping) and spec.get("hook") == HOOK]


# -- the snippet and the loader -----------------------------------------------------------


def test_the_snippet_attaches_the_hook_at_entry_to_exactly_the_default_loops_gates() -> None:
    attach = yaml.safe_load(SNIPPET.read_text())["routing"]["graph"]["hooks"]["attach"]
    assert {(a["hook"], a["boundary"], tuple(a["loops"])) for a in attach} == {
        (HOOK, "entry", (DEFAULT_LOOP,))
    }
    assert sorted(a["node"] for a in attach) == sorted(gates_of_the_default_loop())


def test_the_loop_loads_our_module_and_compiles_every_shipped_loop_with_it(
    cli_config: dict[str, Any], repo: Path
) -> None:
    declaration = read_declaration(cli_config)
    for name in SHIPPED_LOOPS:  # an attachment to a node a loop lacks would break it
        load_graph(repo=repo, name=name, declaration=declaration)
    graph = load_graph(repo=repo, name=DEFAULT_LOOP, declaration=declaration)
    for gate in gates_of_the_default_loop():
        entry = graph.node(gate).entry
        assert entry[-1] == {"hook": HOOK}, gate  # appended after the-loop's own notify
    assert graph.hook_for(HOOK).__module__ == "theloop_hook"


# -- what it sends, compared with what the-loop publishes ----------------------------------


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Events the-loop's bus is handed (its own test seam); no channel is configured."""
    events: list[Any] = []

    def publish(event: Any, cli_config: Any = None, **_: Any) -> SimpleNamespace:
        events.append(event)
        return SimpleNamespace(posts=[], delivered=False)

    monkeypatch.setattr("the_loop.channels.bus.publish", publish)
    return events


def _notify(graph: Graph, ctx: HookContext) -> None:
    """Run the node's own ``notify`` entry exactly as its chain declares it."""
    [spec] = [s for s in graph.node(ctx.node_id).entry if _runs_notify([s])]
    run_chain([spec], ctx)


def _as_wire(event: Any) -> dict[str, Any]:
    return {
        "eventType": event.event_type,
        "workItem": event.work_item,
        "text": event.text,
        "url": event.url,
        "detail": dict(event.detail),
        "source": event.source,
    }


@pytest.mark.parametrize("gate", sorted(gates_of_the_default_loop()))
def test_at_each_gate_the_hook_builds_the_event_the_loops_notify_publishes(
    gate: str, graph: Graph, repo: Path, hook_module: ModuleType, published: list[Any]
) -> None:
    ctx = _context(graph, repo, gate)
    _notify(graph, ctx)
    [expected] = published
    built = hook_module.build_event(_context(graph, repo, gate))
    assert {k: v for k, v in built.items() if k != "id"} == _as_wire(expected)


def test_the_excerpt_is_the_artifact_notify_attaches(
    graph: Graph, repo: Path, hook_module: ModuleType
) -> None:
    built = hook_module.build_event(_context(graph, repo, "requirements-approval"))
    assert built["eventType"] == "phase-approval-pending"
    assert built["detail"]["artifact"] == "requirements.md"
    assert built["detail"]["excerpt"].startswith("# Requirements: a thing")
    assert "status: draft" not in built["detail"]["excerpt"]  # front matter dropped


def test_the_pr_gate_names_the_linked_pull_request_as_notify_does(
    graph: Graph, repo: Path, hook_module: ModuleType, published: list[Any]
) -> None:
    spec = repo / "docs" / "specs" / ITEM
    state = WorkItemState.load(spec, ITEM)
    state.work_item = REF
    state.link_pr("github:acme/api#9", "acme/api", 9, "https://github.com/acme/api/pull/9")
    state.save(spec)
    _notify(graph, _context(graph, repo, "human-approval"))
    built = hook_module.build_event(_context(graph, repo, "human-approval"))
    assert built["url"] == "https://github.com/acme/api/pull/9"
    assert built["detail"] == {"node": "human-approval", "pullRequest": "9"}
    assert {k: v for k, v in built.items() if k != "id"} == _as_wire(published[0])


@pytest.fixture
def lifecycle(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, Mapping[str, str]]]:
    """What the runtime's lifecycle hands the channels (``publish_lifecycle``, its seam)."""
    calls: list[tuple[str, str, Mapping[str, str]]] = []

    def publish(event_type: str, ref: str, text: str, fields: Any, config: Any) -> None:
        calls.append((event_type, text, dict(fields)))

    monkeypatch.setattr("the_loop.channels.publishers.publish_lifecycle", publish)
    return calls


@pytest.mark.parametrize(
    ("node", "boundary", "event_type"),
    [
        ("requirements-definition", "entry", "phase.started"),
        ("requirements-definition", "exit", "phase.completed"),
        ("critic-review", "entry", "phase.progress"),
    ],
)
def test_elsewhere_the_hook_builds_the_runtimes_lifecycle_event(
    node: str,
    boundary: str,
    event_type: str,
    graph: Graph,
    repo: Path,
    hook_module: ModuleType,
    lifecycle: list[Any],
) -> None:
    spec = repo / "docs" / "specs" / ITEM
    state = WorkItemState.load(spec, ITEM)
    state.enter(node)
    state.phase = Runtime(repo, graph=graph).phase_of(node, "needs-review")
    state.save(spec)
    runtime = Runtime(repo, graph=graph)
    runtime._lifecycle(runtime.work_item(ITEM, ref=REF), event_type, node, state.phase)
    [(_, text, fields)] = lifecycle
    built = hook_module.build_event(_context(graph, repo, node, boundary))
    assert (built["eventType"], built["text"], built["detail"]) == (event_type, text, fields)


def test_one_entry_keeps_its_id_and_the_next_entry_gets_a_new_one(
    graph: Graph, repo: Path, hook_module: ModuleType
) -> None:
    spec = repo / "docs" / "specs" / ITEM

    def build() -> str:
        return str(hook_module.build_event(_context(graph, repo, "requirements-approval"))["id"])

    state = WorkItemState.load(spec, ITEM)
    state.enter("requirements-approval")
    state.save(spec)
    first = build()
    assert build() == first  # a retry of this entry is a duplicate at the bot
    state.enter("requirements-approval")  # changes requested, and the gate is back
    state.save(spec)
    assert build() != first


# -- it never wedges the graph --------------------------------------------------------------


@pytest.fixture
def bot_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """The hook's environment, pointing at a bot that is down (bound, not listening)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        monkeypatch.setenv("THELOOP_WEBHOOK_SECRET", "a-secret-the-bot-would-share")
        monkeypatch.setenv("THELOOP_URL", f"http://127.0.0.1:{sock.getsockname()[1]}/")
        yield monkeypatch


def test_a_bot_that_is_down_is_a_passing_result_the_loop_reports_as_degraded(
    graph: Graph, repo: Path, bot_env: pytest.MonkeyPatch
) -> None:
    spec = {"hook": HOOK, "with": {"deadline": 0.3, "timeout": 0.2}}
    outcome = run_chain([spec], _context(graph, repo, "requirements-approval"))
    assert outcome.status == "pass"
    [(hook, error)] = _degradations(outcome)
    assert hook == HOOK and "could not reach" in error


def test_what_a_down_bot_could_not_take_waits_in_the_spool_to_go_first(
    graph: Graph, repo: Path, bot_env: pytest.MonkeyPatch, spool: Path
) -> None:
    spec = {"hook": HOOK, "with": {"deadline": 0.3, "timeout": 0.2}}
    [result] = run_chain([spec], _context(graph, repo, "requirements-approval")).results
    assert (result.data["delivered"], result.data["spooled"]) == (False, True)
    [kept] = spool.glob("*.json")
    assert json.loads(kept.read_text(encoding="utf-8"))["id"] == result.data["id"]
    elsewhere = repo.parent / "elsewhere"  # the attachment's own spool wins
    spec["with"]["spool"] = str(elsewhere)
    run_chain([spec], _context(graph, repo, "requirements-approval"))
    assert len(list(elsewhere.glob("*.json"))) == 1


def test_a_missing_url_or_secret_is_a_degraded_pass_naming_the_variable(
    graph: Graph, repo: Path, bot_env: pytest.MonkeyPatch
) -> None:
    ctx = _context(graph, repo, "requirements-approval")
    bot_env.delenv("THELOOP_URL")
    [(_, error)] = _degradations(run_chain(_attached(graph, "requirements-approval"), ctx))
    assert "THELOOP_URL" in error
    bot_env.setenv("THELOOP_URL", "http://127.0.0.1:1/")  # never dialled: no secret
    bot_env.delenv("THELOOP_WEBHOOK_SECRET")
    [(_, error)] = _degradations(run_chain(_attached(graph, "requirements-approval"), ctx))
    assert "THELOOP_WEBHOOK_SECRET" in error


def test_a_bug_inside_the_hook_is_a_degraded_pass_not_a_block(
    graph: Graph, repo: Path, hook_module: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_ctx: HookContext) -> dict[str, Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(hook_module, "build_event", broken)
    outcome = run_chain(_attached(graph, "escalated"), _context(graph, repo, "escalated"))
    assert outcome.status == "pass"
    assert "boom" in _degradations(outcome)[0][1]


# -- end to end: the-loop's chain, our hook, a real running bot -----------------------------


@pytest.mark.e2e
def test_the_hook_run_in_the_loops_chain_lands_in_a_running_bots_inbox(
    graph: Graph, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "hook-e2e-secret-0123456789abcdef"
    bot = BotProcess(tmp_path / "bot", env={"THELOOP_WEBHOOK_SECRET": secret}).start()
    try:
        monkeypatch.setenv("THELOOP_URL", bot.url("/"))  # a bare base URL gets the path
        monkeypatch.setenv("THELOOP_WEBHOOK_SECRET", secret)
        chain = _attached(graph, "requirements-approval")
        [first] = run_chain(chain, _context(graph, repo, "requirements-approval")).results
        [again] = run_chain(chain, _context(graph, repo, "requirements-approval")).results
    finally:
        bot.stop()
    assert (first.status, first.data["delivered"], first.data["status"]) == ("pass", True, 202)
    assert first.data["event"] == "phase-approval-pending"
    assert (again.data["duplicate"], again.data["status"], again.data["id"]) == (
        True,
        200,
        first.data["id"],
    )
    with bot.inbox() as inbox:
        assert inbox.get(first.data["id"]) is not None
