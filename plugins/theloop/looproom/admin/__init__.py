"""theloop's own commands: what each answers (``answers``), as text (``text``, ``bind``)."""
