"""New work items from Slack: a message to the bot, or ``/the-loop new``, becomes an issue."""
