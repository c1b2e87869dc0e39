"""Many the-loop instances, one bot: the ``instances:`` section and what follows from it.

Each instance signs its own events (its key id and secrets), owns its own work items (by
repository, by ref prefix, or claimed by the first event it sends about one) and has its
own control plane and stream. The webhook tells the instance by its key id, refuses an
event for a work item another instance owns, and every call to a control plane goes to
the instance that owns the work item. Without ``instances:`` none of this runs: the one
``THELOOP_WEBHOOK_SECRET`` / ``THELOOP_LOOP_API`` form behaves as it always did.
"""
