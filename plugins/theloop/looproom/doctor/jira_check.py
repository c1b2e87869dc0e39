"""The doctor's look at the Jira ledger: is the credential there, and does Jira take it?"""

from __future__ import annotations

from looproom.doctor.findings import OK, PROBLEM, Finding
from looproom.relay.jira_sink import JiraSink

SUBJECT = "Jira"


def finding(sink: JiraSink) -> Finding:
    """One finding: the site, the projects, and whether ``myself`` answers."""
    site = sink.site
    where = f"{site.site} ({site.deployment}; projects {', '.join(site.projects) or 'none'})"
    missing = sink.missing()
    if missing:
        return Finding(PROBLEM, SUBJECT, f"{where}: {missing}", "set the variables it names")
    account = sink.myself()
    if not account:
        return Finding(
            PROBLEM,
            SUBJECT,
            f"{where}: Jira did not answer who the credential is (GET …/myself)",
            "check the token, the e-mail and the site; THELOOP_JIRA_API if it is proxied",
        )
    return Finding(
        OK,
        SUBJECT,
        f"{where}: the credential is account {account} — it must be the-loop's own service "
        "account, or the-loop reads relayed decisions as text",
    )
