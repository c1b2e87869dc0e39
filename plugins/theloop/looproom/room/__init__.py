"""The room: which room and thread, how an event is drawn and posted, what the room saw."""
