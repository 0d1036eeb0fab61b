"""The game service's commands: each one transaction (ARCHITECTURE.md, command flow).

``partie_start``, ``hand_deal``, ``move_play``, ``deadline_fire`` (the time-out, forced or
delayed bot move of a pending decision), ``timer_fire`` (a hand's armed Celery timer) and
``partie_close``.
"""

from .moves import MovePlayed, deadline_fire, move_play, timer_fire
from .parties import hand_deal, partie_close, partie_start, partie_tick

__all__ = [
    "MovePlayed", "deadline_fire", "hand_deal", "move_play", "partie_close", "partie_start",
    "partie_tick", "timer_fire",
]
