"""The ways in from Slack: typed messages, presses, shortcuts, forms and ``/the-loop``, read and
handed to the decision desk (:mod:`looproom.decide`)."""
