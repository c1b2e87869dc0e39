"""The asks a work item waits on people for: recorded, told, reminded, escalated, shown."""
