"""The event path's way in: the signed webhook, the-loop's stream, and the event they admit."""
