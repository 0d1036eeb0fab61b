"""What the game services announce once a command has committed.

The services send these; ``games.live`` receives ``committed`` and pushes the frames (connected in
``GamesConfig.ready``). The services thus need nothing of the live layer, which reads hands
through the selectors, which read the services' event store: the arrows point one way.
"""

from django.dispatch import Signal

#: ``partie``, ``changed`` (each hand the command changed, with the events it appended to it,
#: in record form, in order), ``closed`` (whether it closed the partie) and ``paused`` (True
#: if it paused the table, False if it resumed it, None otherwise): once per command.
committed = Signal()
#: ``partie`` and ``hand``: the hand has just ended. Sent inside the command's transaction,
#: before it commits, so that what a receiver stores from it (a read model of the soirée)
#: commits or rolls back with the hand's last event. A receiver that fails fails the command.
hand_ended = Signal()
#: ``partie``: the partie has just closed (its pot shared, if any). Sent inside the close's
#: transaction, as ``hand_ended`` is.
partie_ended = Signal()
