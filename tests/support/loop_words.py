"""Words the real the-loop reads one way, written out for the tests that hold us to them.

Each list is read off the installed ``the_loop`` (its gate classifier in
``the_loop.graph.hooks.feedback``), not off our own tables, so a phrase missing from ours
fails a unit test; the contract tests check each list against the real package.
"""

from __future__ import annotations

#: What the-loop's gate classifier reads as "changes requested" wherever it appears in a
#: comment (in any case), even after an "approved".
CHANGE_PHRASES = ("changes requested", "request changes", "please change", "rejected")
