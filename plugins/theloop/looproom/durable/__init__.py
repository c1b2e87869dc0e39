"""The durable queue and the worker loop that both paths deliver through."""
