"""The event path's way in: the signed webhook and the-loop's stream (``looproom.events``)."""
