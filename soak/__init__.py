"""The soak: the real bot for a bounded time against the loopback fakes, under faults.

``make soak`` (``python -m soak``) starts a real ``errbot -c config.py`` (SlackV3 on Socket
Mode) against the loopback fakes of Slack, GitHub and the-loop's control plane, drives
the-loop's real events and people's decisions through it over many work items and rooms,
injects a seeded fault schedule (printed at start), drains, and checks a ledger: every
accepted event's outcome in the room exactly once, every admitted decision relayed exactly
once, nothing parked, no Slack call refused for its limits. docs/soak.md says what each
figure means.
"""
