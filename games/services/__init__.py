"""The game service's commands: each one transaction (ARCHITECTURE.md, command flow).

``partie_start``, ``hand_deal``, ``partie_tick`` (deal the next hand once its pause has passed),
``move_play``, ``share_send`` (a seated person's share of the deal's randomness),
``deadline_fire`` (the time-out, forced or delayed bot move of a pending
decision, or the end of a Comet chance), ``seat_away`` (a player leaves the table or comes
back), ``seat_comet_order`` (the Comet holder's standing order), ``partie_stop_dealing``
(a closing time brought forward) and ``partie_close``;
the casual tables' ``casual_table_create``, ``invitation_answer`` and ``casual_table_close``;
``seat_wallet`` (the account a seat plays from); ``CASUAL`` and ``casual_max_buy_in`` (the
casual tables' club key and buy-in limit); and the bounds every partie keeps (``OPTION_MAX``,
``MAX_HANDS``, ``MAX_BUY_IN``), for the API to refuse a body before it reaches them.
"""

from .chips import seat_wallet
from .invitations import (
    CASUAL,
    casual_max_buy_in,
    casual_table_close,
    casual_table_create,
    invitation_answer,
)
from .moves import (
    ASK_WINDOW_MIN,
    MovePlayed,
    deadline_fire,
    move_play,
    seat_away,
    seat_comet_order,
    share_send,
)
from .parties import (
    BOT_LEVELS,
    BOT_NAMES,
    LENGTH_OPTION,
    MAX_BUY_IN,
    MAX_HANDS,
    OPTION_MAX,
    bot_for,
    hand_deal,
    partie_close,
    partie_start,
    partie_stop_dealing,
    partie_tick,
)

__all__ = [
    "BOT_LEVELS", "BOT_NAMES", "bot_for", "LENGTH_OPTION", "casual_table_close",
    "casual_table_create",
    "invitation_answer", "MAX_BUY_IN", "MAX_HANDS", "OPTION_MAX", "MovePlayed",
    "deadline_fire", "hand_deal", "move_play", "partie_close", "partie_start",
    "partie_stop_dealing", "partie_tick", "seat_away", "seat_comet_order", "share_send",
    "seat_wallet", "CASUAL",
    "casual_max_buy_in", "ASK_WINDOW_MIN",
]
