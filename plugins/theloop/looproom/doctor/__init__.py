"""Why is the room silent? Each thing the bot depends on, checked, with what to do about it.

The same code answers ``!theloop doctor`` in chat and ``make doctor`` in a shell
(``python -m looproom.doctor``): :func:`looproom.doctor.examine.examine` takes what it checks
(the environment, the settings, a Slack transport, the Socket Mode client) as arguments.
"""
