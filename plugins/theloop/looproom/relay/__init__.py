"""Decisions out: each recorded decision carried to GitHub or the-loop once, in its form."""
