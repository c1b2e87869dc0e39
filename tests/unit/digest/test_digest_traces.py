"""Stack traces of the common runtimes become a pointer, as Python's do: a fence
that holds one and nothing else, or a run of trace lines inside a paragraph,
which then sits between the paragraph's prose."""

from __future__ import annotations

import pytest

from looproom.digest import condense

URL = "https://github.com/o/r/issues/7#issuecomment-1"
FILLER = "This sentence is filler that pads the text well past the limit. " * 40

TRACES = {
    "python": (
        "Traceback (most recent call last):\n"
        '  File "/app/loop.py", line 12, in advance\n'
        "    step(item)\n"
        "ValueError: no such phase"
    ),
    "node": (
        "TypeError: Cannot read properties of undefined (reading 'id')\n"
        "    at advance (/app/loop.js:12:7)\n"
        "    at Object.<anonymous> (/app/index.js:3:1)\n"
        "    at node:internal/main/run_main_module:28:49"
    ),
    "java": (
        'Exception in thread "main" java.lang.IllegalStateException: no such phase\n'
        "\tat com.loop.Scheduler.advance(Scheduler.java:42)\n"
        "\tat com.loop.Main.main(Main.java:7)\n"
        "Caused by: java.io.IOException: lease lost\n"
        "\t... 2 more"
    ),
    "kotlin": (
        "Caused by: kotlin.UninitializedPropertyAccessException: lease\n"
        "\tat com.loop.Lease.renew(Lease.kt:18)\n"
        "\tat com.loop.Worker.run(Worker.kt:33)"
    ),
    "go": (
        "panic: runtime error: index out of range [5] with length 3\n"
        "\n"
        "goroutine 1 [running]:\n"
        "main.advance(...)\n"
        "\t/app/loop.go:12 +0x1d\n"
        "main.main()\n"
        "\t/app/main.go:8 +0x25\n"
        "exit status 2"
    ),
    "rust": (
        "thread 'main' panicked at src/loop.rs:12:5:\n"
        "index out of bounds: the len is 3 but the index is 5\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
    ),
    "dotnet": (
        "Unhandled exception. System.InvalidOperationException: no such phase\n"
        "   at Loop.Scheduler.Advance() in C:\\src\\Scheduler.cs:line 42\n"
        "   at Loop.Program.Main(String[] args) in C:\\src\\Program.cs:line 7"
    ),
}


def _lines(text: str) -> int:
    return text.count("\n") + 1


@pytest.mark.parametrize("runtime", sorted(TRACES))
def test_a_fence_holding_a_trace_is_a_stack_trace_pointer(runtime: str) -> None:
    trace = TRACES[runtime]
    digest = condense(f"Before.\n\n```\n{trace}\n```\n\nAfter.\n\n{FILLER}", 500, URL)
    assert f"Before.\n\n_⟨stack trace: {_lines(trace)} lines⟩_\n\nAfter." in digest


@pytest.mark.parametrize("runtime", sorted(set(TRACES) - {"go"}))  # a blank line ends a paragraph
def test_a_trace_inside_a_paragraph_is_a_pointer_between_its_prose(runtime: str) -> None:
    trace = TRACES[runtime]
    text = f"It failed:\n{trace}\nThen it stopped.\n\n{FILLER}"
    digest = condense(text, 500, URL)
    assert f"It failed:\n\n_⟨stack trace: {_lines(trace)} lines⟩_\n\nThen it stopped." in digest


@pytest.mark.parametrize(
    "code",
    [
        "def advance(item):\n    return step(item)",
        "const at = (x) => x\nat(1)",
        "TypeError: shown in the docs\nbut no frame follows it",
        'panic("no")\nfmt.Println("x")',
    ],
)
def test_code_that_only_mentions_a_trace_stays_code(code: str) -> None:
    digest = condense(f"Before.\n\n```\n{code}\n```\n\n{FILLER}", 500, URL)
    assert f"_⟨code: {_lines(code)} lines⟩_" in digest
