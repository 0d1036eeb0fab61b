"""The rules' refusals in the reader's language.

The engine imports nothing of the project, so its messages (``RuleError``) are English. Here
each one is matched, with its values (cards, suits), and given again from the message
catalogue; one the table does not know is left as the engine wrote it.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext_lazy as _

#: The words a message's values may be: suits, and what a seat must do.
_VALUES = {
    "club": _("club"), "diamond": _("diamond"), "heart": _("heart"), "spade": _("spade"),
    "speak (offer a card or announce)": _("speak (offer a card or announce)"),
    "give back a card": _("give back a card"), "announce": _("announce"),
    "return a card under the talon": _("return a card under the talon"),
}

_MESSAGES: list[tuple[re.Pattern[str], object]] = [(re.compile(f"^{pattern}$"), words) for
                                                   pattern, words in [
    (r"the Comet has already been played in this deal",
     _("the Comet has already been played in this deal")),
    (r"only the holder of the Comet can play it", _("only the holder of the Comet can play it")),
    (r"only the holder of the Comet can keep it", _("only the holder of the Comet can keep it")),
    (r"the Comet cannot be played after a king", _("the Comet cannot be played after a king")),
    (r"the Comet cannot open a run unless it is your last card",
     _("the Comet cannot open a run unless it is your last card")),
    (r"a run is under way: it needs (?P<card>\w\w)", _("a run is under way: it needs {card}")),
    (r"to open, choose a suit: C, D, H or S", _("to open, choose a suit: C, D, H or S")),
    (r"your only card is the Comet: play it to open and go out",
     _("your only card is the Comet: play it to open and go out")),
    (r"you hold no (?P<suit>\w+) to open with", _("you hold no {suit} to open with")),
    (r"you must open with your lowest (?P<suit>\w+), (?P<card>\w\w)",
     _("you must open with your lowest {suit}, {card}")),
    (r"the Comet is played with the comet move", _("the Comet is played with the comet move")),
    (r"you do not hold (?P<card>\w\w)", _("you do not hold {card}")),
    (r"the run needs (?P<need>\w\w), not (?P<card>\w\w)", _("the run needs {need}, not {card}")),
    (r"you open the next run: choose a suit, and your lowest card of it is played",
     _("you open the next run: choose a suit, and your lowest card of it is played")),
    (r"the run is blocked \((?P<why>.*)\): only the Comet can be played",
     _("the run is blocked: only the Comet can be played")),
    (r"no blocked run is asking for the Comet now",
     _("no blocked run is asking for the Comet now")),
    (r"you can only announce a combination you hold",
     _("you can only announce a combination you hold")),
    (r"nobody announces during phase 2: .*",
     _("nobody announces during phase 2: return a card under the talon; a combination is "
       "announced in the next phase 1")),
    (r"you must announce: .*", _("you must announce: you hold a combination")),
    (r"it is your turn to speak: .*",
     _("it is your turn to speak: offer one of your cards to the next player (or announce a "
       "combination you hold)")),
    (r"you were offered a card: .*",
     _("you were offered a card: give back one of the three cards you held before the offer")),
    (r"you received the talon's top card: .*",
     _("you received the talon's top card: return one of your four cards under the talon")),
    (r"you can only give back one of the three cards you held before the offer",
     _("you can only give back one of the three cards you held before the offer")),
    (r"it is not your turn: seat (?P<seat>\d+) must open",
     _("it is not your turn: seat {seat} must open")),
    (r"it is not your turn: the run needs (?P<card>\w\w)",
     _("it is not your turn: the run needs {card}")),
    (r"it is not your turn: the run is blocked and the Comet holder is asked",
     _("it is not your turn: the run is blocked and the Comet holder is asked")),
    (r"it is not your turn: seat (?P<seat>\d+) must (?P<what>.*)",
     _("it is not your turn: seat {seat} must {what}")),
    (r"nobody may move now: the banker is dealing from the talon",
     _("nobody may move now: the banker is dealing from the talon")),
    (r"it is not your turn", _("it is not your turn")),
]]


def in_words(message: str) -> str:
    """``message``, an engine's refusal, in the active language."""
    for pattern, words in _MESSAGES:
        found = pattern.match(message)
        if found:
            values = {k: str(_VALUES.get(v, v)) for k, v in found.groupdict().items()}
            return str(words).format(**values)
    return message
