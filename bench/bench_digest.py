"""Bench: our digest against the-loop's, side by side in one process (DESIGN §6).

    python bench/bench_digest.py [--rounds 5] [--limit 1500]

Prints, for ``fit`` over the whole corpus (``../shared/corpus``) and for
``to_mrkdwn`` over texts under the limit: each side's total time, MB/s, the
ratio of the totals and the median per-text ratio ours/theirs — medians of
``--rounds`` interleaved rounds. Then A1's table: each crafted 64 KB input's
time over 64 KB of prose's, and over its own 32 KB half (≈ 2 when linear).
Times are this process's CPU time, so other work on the machine bends them less.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "plugins" / "theloop"))
sys.path.insert(0, str(HERE))

from _crafted import CRAFTED, PROSE, SIZE  # noqa: E402
from the_loop.channels import digest as theirs  # noqa: E402

from looproom import digest as ours  # noqa: E402

CORPUS = HERE.parent / ".." / "shared" / "corpus"
URL = "https://github.com/MadaraUchiha-314/the-loop/issues/260#issuecomment-1"
Job = Callable[[str], str]


def corpus_texts() -> list[str]:
    """Every document, and every message's text and excerpt."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((CORPUS / "the-loop-docs").glob("*.md"))]
    for path in sorted((CORPUS / "messages").glob("*.json")):
        event = json.loads(path.read_text(encoding="utf-8"))
        texts += [event.get("text", ""), event.get("detail", {}).get("excerpt", "")]
    return [text for text in texts if text.strip()]


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
    """A1: each crafted input's time ÷ prose's, for the digest and the drawing;
    the digest also ÷ prose read whole (``to_mrkdwn``), since a crafted input must
    be read whole where prose lets the digest stop early."""
    jobs = {"fit": lambda t: ours.fit(t, limit, url=URL), "draw": ours.to_mrkdwn}
    base = {name: _median(job, PROSE, rounds) for name, job in jobs.items()}
    print(
        f"\nA1 — crafted {SIZE // 1024} KB inputs: time ÷ {SIZE // 1024} KB of prose "
        f"(fit {base['fit'] * 1e3:.1f} ms, to_mrkdwn {base['draw'] * 1e3:.1f} ms), "
        "and 64 KB ÷ its first 32 KB (≈ 2 when linear)"
    )
    print(
        f"  {'input':24} {'fit':>8} {'fit÷draw':>9} {'to_mrkdwn':>10} "
        f"{'64/32 fit':>10} {'64/32 draw':>11}"
    )
    for name, text in CRAFTED.items():
        times = {key: _median(job, text, rounds) for key, job in jobs.items()}
        half = text[: len(text) // 2]
        growth = [times[key] / _median(job, half, rounds) for key, job in jobs.items()]
        print(
            f"  {name:24} {times['fit'] / base['fit']:7.1f}x {times['fit'] / base['draw']:8.1f}x "
            f"{times['draw'] / base['draw']:9.1f}x {growth[0]:9.1f}x {growth[1]:10.1f}x"
        )


def _median(job: Job, text: str, rounds: int) -> float:
    """The median CPU time of ``job(text)`` (never zero: it is divided by)."""
    return max(statistics.median(cpu(partial(job, text)) for _ in range(rounds)), 1e-6)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=1500)
    args = parser.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS.resolve()}: the bench needs ../shared/corpus")
        return 1
    texts = corpus_texts()
    limit, rounds = args.limit, args.rounds
    print(f"digest bench — limit {limit}, {rounds} rounds, CPU time of this process")
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
