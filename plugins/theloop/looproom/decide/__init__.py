"""Decisions in: typed words and presses read, authorized, checked against the room, recorded."""
