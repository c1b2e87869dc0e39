"""The bot's own HTTP server: waitress, bounded, serving only theloop's routes, in JSON."""
