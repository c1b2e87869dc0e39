"""Decisions: the vocabulary (kinds, verbs, grammar), and judging — read, authorized, checked
against the room, recorded."""
