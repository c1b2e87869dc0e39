"""The shared mode: every replica's state in one PostgreSQL database (THELOOP_DATABASE_URL)."""
