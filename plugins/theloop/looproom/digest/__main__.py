"""Preview what Slack will show: ``python -m looproom.digest [--limit N]
[--mode digest|truncate] [--url URL] [FILE|-]`` (with ``plugins/theloop`` on
``PYTHONPATH``) prints :func:`looproom.digest.fit` of the file, or of stdin."""

from __future__ import annotations

import argparse
import sys

from . import DEFAULT_DIGEST_MODE, DIGEST_MODES, fit


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.file == "-":
        text = sys.stdin.read()
    else:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    print(fit(text, args.limit, args.mode, args.url))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m looproom.digest",
        description="Print what Slack will show for a markdown text (the digest preview).",
    )
    parser.add_argument("file", nargs="?", default="-", help="markdown file; - or none: stdin")
    parser.add_argument("--limit", type=int, default=1500, help="maxChars (default 1500)")
    parser.add_argument("--mode", choices=DIGEST_MODES, default=DEFAULT_DIGEST_MODE)
    parser.add_argument("--url", default="", help="the full text's URL, for the footer")
    return parser


if __name__ == "__main__":
    sys.exit(main())
