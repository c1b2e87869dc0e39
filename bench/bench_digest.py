"""Bench: our digest against the-loop's, side by side in one process.

    python bench/bench_digest.py [--rounds 5] [--limit 1500]

Prints, for ``fit`` over the corpus (all of ``../shared/corpus`` when it is beside
the checkout, else the slice kept in ``tests/data``) and for ``to_mrkdwn`` over
texts under the limit: each side's total time, MB/s, the ratio of the totals and
the median per-text ratio ours/theirs — medians of ``--rounds`` interleaved
rounds. Then the crafted inputs (``_crafted.py``): each one's ``fit`` time over
prose's of the same size, at 64 KB and at 256 KB, the two run in alternate
rounds. Times are this process's CPU time, so other work on the machine bends
them less.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "plugins" / "theloop"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _crafted import SIZES, crafted, prose  # noqa: E402
from the_loop.channels import digest as theirs  # noqa: E402

from looproom import digest as ours  # noqa: E402
from tests.support.corpus import SHARED_DOCS, texts  # noqa: E402

URL = "https://github.com/MadaraUchiha-314/the-loop/issues/260#issuecomment-1"
Job = Callable[[str], str]


def corpus_texts() -> list[str]:
    """Every document, and every message's text and excerpt."""
    return [text for _, text in texts()]


def short_texts(texts: list[str], limit: int) -> list[str]:
    """Texts under the limit: the short ones whole, and each long one's opening
    paragraphs up to the limit — what a short message looks like."""
    out = []
    for text in texts:
        text = text.strip()
        if len(text) > limit:
            cut = text.rfind("\n\n", 0, limit)
            text = text[:cut].strip() if cut > 0 else ""
        if text:
            out.append(text)
    return out


def cpu(job: Callable[[], object]) -> float:
    start = time.process_time()
    job()
    return time.process_time() - start


def totals(texts: list[str], mine: Job, peer: Job, rounds: int) -> tuple[float, float, float]:
    """Median total seconds of each, and the median of the per-round ratios;
    the two run interleaved so a busy moment hits both."""
    a, b, ratios = [], [], []
    for _ in range(rounds):
        a.append(cpu(lambda: [mine(t) for t in texts]))
        b.append(cpu(lambda: [peer(t) for t in texts]))
        ratios.append(a[-1] / b[-1])
    return statistics.median(a), statistics.median(b), statistics.median(ratios)


def per_text_ratio(texts: list[str], mine: Job, peer: Job, rounds: int) -> float:
    """The median over texts of (median time ours) / (median time theirs)."""
    ratios = []
    for text in texts:
        a = _median(mine, text, rounds)
        b = _median(peer, text, rounds)
        ratios.append(a / b if b > 0 else float("inf"))
    return statistics.median(ratios)


def report(title: str, texts: list[str], mine: Job, peer: Job, rounds: int) -> None:
    size = sum(len(t.encode()) for t in texts) / 1e6
    a, b, ratio = totals(texts, mine, peer, rounds)
    per_text = per_text_ratio(texts, mine, peer, rounds)
    print(f"\n{title}: {len(texts)} texts, {size:.2f} MB")
    print(f"  ours    {a:7.3f} s  {size / a:6.2f} MB/s")
    print(f"  theirs  {b:7.3f} s  {size / b:6.2f} MB/s")
    print(f"  ours/theirs: total {a / b:.2f}x (median of rounds {ratio:.2f}x), "
          f"median per text {per_text:.2f}x")  # fmt: skip


def crafted_table(limit: int, rounds: int) -> None:
    """Each crafted input's ``fit`` time ÷ prose's of the same size (prose is read
    to its end: its only question is its last sentence), the two measured in
    alternate rounds so that a busy moment of the machine bends both alike, and
    256 KB ÷ 64 KB (≈ 4 when linear)."""
    job = partial(_fit, limit=limit)
    texts = {size: prose(size) for size in SIZES}
    base = {size: _median(job, texts[size], rounds) for size in SIZES}
    inputs = {size: crafted(size) for size in SIZES}
    small, large = SIZES
    print(
        f"\ncrafted inputs: fit(text, {limit}) ÷ fit of prose of the same size "
        f"({small // 1024} KB {base[small] * 1e3:.1f} ms, {large // 1024} KB "
        f"{base[large] * 1e3:.1f} ms), and {large // 1024} KB ÷ {small // 1024} KB"
    )
    print(f"  {'input':40} {small // 1024:>5} KB {large // 1024:>5} KB {'growth':>8}")
    for name in inputs[small]:
        ratios, times = {}, {}
        for size in SIZES:
            ratios[size], times[size] = _over_prose(job, inputs[size][name], texts[size], rounds)
        print(
            f"  {name:40} {ratios[small]:7.2f}x {ratios[large]:7.2f}x "
            f"{times[large] / times[small]:7.1f}x"
        )


def _over_prose(job: Job, text: str, prose_text: str, rounds: int) -> tuple[float, float]:
    """The median time of ``job(text)`` over that of ``job(prose_text)``, the two
    run in alternate rounds; and the first median."""
    mine, base = [], []
    for _ in range(rounds):
        base.append(cpu(partial(job, prose_text)))
        mine.append(cpu(partial(job, text)))
    median = max(statistics.median(mine), 1e-6)
    return median / max(statistics.median(base), 1e-6), median


def _fit(text: str, limit: int) -> str:
    return ours.fit(text, limit, url=URL)


def _median(job: Job, text: str, rounds: int) -> float:
    """The median CPU time of ``job(text)`` (never zero: it is divided by)."""
    return max(statistics.median(cpu(partial(job, text)) for _ in range(rounds)), 1e-6)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=1500)
    args = parser.parse_args(argv)
    texts = corpus_texts()
    limit, rounds = args.limit, args.rounds
    where = "the shared corpus" if SHARED_DOCS.is_dir() else "the slice in tests/data"
    print(f"digest bench — limit {limit}, {rounds} rounds, CPU time of this process, {where}")
    report(
        f"fit(text, {limit}) over the corpus",
        texts,
        lambda t: ours.fit(t, limit, url=URL),
        lambda t: theirs.fit(t, limit, url=URL),
        rounds,
    )
    report(
        f"to_mrkdwn over texts under {limit} characters",
        short_texts(texts, limit),
        ours.to_mrkdwn,
        theirs.to_mrkdwn,
        rounds,
    )
    crafted_table(limit, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
