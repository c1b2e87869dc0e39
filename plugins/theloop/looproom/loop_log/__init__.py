"""The room's own records for the-loop's event log (``channel.*``), kept and read signed."""
