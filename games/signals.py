"""What the game services announce once a command has committed.

The services send these; ``games.live`` receives them and pushes the frames (connected in
``GamesConfig.ready``). The services thus need nothing of the live layer, which reads hands
through the selectors, which read the services' event store: the arrows point one way.
"""

from django.dispatch import Signal

#: ``partie``, ``hand`` and ``events`` (the events the command appended, in record form).
hand_changed = Signal()
#: ``partie``: the partie has just closed.
partie_closed = Signal()
