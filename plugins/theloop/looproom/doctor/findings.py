"""One finding of the doctor, and the report they make together."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

OK = "ok"
PROBLEM = "problem"
#: What a measurement suggests but cannot prove, or what could not be checked from here.
EVIDENCE = "evidence"
NOTE = "note"
_GLYPHS = {OK: "✅", PROBLEM: "❌", EVIDENCE: "⚠️", NOTE: "ℹ️"}


@dataclass(frozen=True)
class Finding:
    """``subject`` (what was checked) ``says`` what was found; ``remedy`` what to do."""

    level: str
    subject: str
    says: str
    remedy: str = ""

    def line(self) -> str:
        text = f"{_GLYPHS[self.level]} {self.subject}: {self.says}"
        return text + (f"\n    → {self.remedy}" if self.remedy else "")


def report(findings: Iterable[Finding]) -> str:
    """The findings as the doctor prints them: a summary line, then one entry each."""
    found = list(findings)
    problems = sum(f.level == PROBLEM for f in found)
    evidence = sum(f.level == EVIDENCE for f in found)
    summary = (
        f"theloop doctor: {problems} problem(s), {evidence} to look into"
        if problems or evidence
        else "theloop doctor: everything checked is in order"
    )
    return "\n".join([summary, *(finding.line() for finding in found)])
