"""Slack for both paths: the one Web API client, its replies, retries and pacing; Slack's
signatures; the text rules; the room adapters the desk, the relay and the kickoff speak through."""
