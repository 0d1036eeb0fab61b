"""The words of the table page: cards, combinations, moves and the log, from the message
catalogues (French first), handed to the page's script as one JSON object.

Placeholders are ``{name}``-style, filled in by the script. French needs the article with the
rank ("la dame de cœur", "l'as de pique"), so a card is named either bare ("sept de trèfle",
a button's name) or with its article ("le sept de trèfle", in a sentence).
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from games.models import Game


def table_words() -> dict[str, Any]:
    return {
        "rank": {
            "A": pgettext("card rank", "ace"), "2": pgettext("card rank", "two"),
            "3": pgettext("card rank", "three"), "4": pgettext("card rank", "four"),
            "5": pgettext("card rank", "five"), "6": pgettext("card rank", "six"),
            "7": pgettext("card rank", "seven"), "8": pgettext("card rank", "eight"),
            "9": pgettext("card rank", "nine"), "T": pgettext("card rank", "ten"),
            "J": pgettext("card rank", "jack"), "Q": pgettext("card rank", "queen"),
            "K": pgettext("card rank", "king"),
        },
        "the_rank": {
            "A": _("the ace"), "2": _("the two"), "3": _("the three"), "4": _("the four"),
            "5": _("the five"), "6": _("the six"), "7": _("the seven"), "8": _("the eight"),
            "9": _("the nine"), "T": _("the ten"), "J": _("the jack"), "Q": _("the queen"),
            "K": _("the king"),
        },
        "ranks_plural": {
            "A": _("aces"), "2": _("twos"), "3": _("threes"), "4": _("fours"), "5": _("fives"),
            "6": _("sixes"), "7": _("sevens"), "8": _("eights"), "9": _("nines"),
            "T": _("tens"), "J": _("jacks"), "Q": _("queens"), "K": _("kings"),
        },
        # The corner of a drawn card: a French pack reads valet, dame, roi.
        "face": {"J": pgettext("card corner", "J"), "Q": pgettext("card corner", "Q"),
                 "K": pgettext("card corner", "K")},
        "suit": {"C": _("clubs"), "D": _("diamonds"), "H": _("hearts"), "S": _("spades")},
        "card": _("{rank} of {suit}"),
        "combination": {
            "tricon": _("a tricon of {ranks}"),
            "sequence": _("a sequence, {the_rank} high"),
            "point": _("a point in {suit}"),
        },
        "button": {
            "open": _("open with {suit}"),
            "comet": _("play the Comet"),
            "keep_comet": _("keep the Comet"),
            "announce": _("announce"),
        },
        "prompt": {
            "open": _("Your turn: open a run, with the lowest card of a suit."),
            "play": _("Your turn: play the next card of the run."),
            "comet": _("The Comet may be played here."),
            "comet_instead": _("You hold the Comet: you may play it now, in place of {card} "
                               "(each other player pays you {n})."),
            "offer": _("Your turn: choose the card to offer to {name}."),
            "give_back": _("{name} offers you a card: choose one of your three cards to give "
                           "back."),
            "announce": _("You hold a combination: announce it."),
            "return": _("Choose the card to put under the talon."),
            "forced": _("Your only move, played for you in a moment: {move}."),
            "forced_chance": _("Your only move, played for you when the Comet's chance ends, "
                               "unless its holder plays the Comet in its place: {move}."),
            "ask_turn": _("Your turn: play your card or the Comet before the chance ends; "
                          "otherwise your card is played for you and you keep the Comet."),
            "blocked_played": _("The run is blocked: its next card has already been played."),
            "blocked_gap": _("The run is blocked at the diamond gap (the eight of diamonds is "
                             "out of the pack)."),
            "ask_blocked": _("Play the Comet to carry it on (each other player pays you), or "
                             "keep it; if you do neither before the chance ends, you keep it."),
            "order_card": _("Your order plays {card} for you when the chance ends, and you keep "
                            "the Comet. You may still choose the Comet."),
            "order_keep": _("Your order keeps the Comet when the chance ends. You may still "
                            "play it."),
            "order_comet": _("Your order plays the Comet for you when the chance ends. You may "
                             "still choose otherwise."),
            "wait": _("Waiting for {names}."),
            "wait_comet": _("Waiting for the Comet's holder."),
            "watching": _("You are watching this table."),
        },
        "log": {
            "hand_started": _("Hand {number}: {name} deals."),
            "open": _("{name} opens with {card}."),
            "play": _("{name} plays {card}."),
            "comet": _("{name} plays the Comet for {card}."),
            "offer_withdrawn": _("The offer of {name} is withdrawn: the card goes back to "
                                 "{name}, and nothing changes hands."),
            "keep_comet": _("{name} keeps the Comet."),
            "keep_comet_hidden": _("The Comet is not played."),
            "stop_king": _("The run stops at the king."),
            "stop_gap": _("The run stops at the diamond gap."),
            "stop_played": _("The run stops: {card} has already been played."),
            "out": _("{name} goes out."),
            "offer": _("{name} offers {card} to {to}."),
            "offer_hidden": _("{name} offers a card to {to}."),
            "give_back": _("{name} gives {card} back to {to}."),
            "give_back_hidden": _("{name} gives a card back to {to}."),
            "draw": _("{name} takes {card} from the talon."),
            "draw_hidden": _("{name} takes a card from the talon."),
            "return": _("{name} puts {card} under the talon."),
            "return_hidden": _("{name} puts a card under the talon."),
            "announce": _("{name} announces."),
            "showdown": _("{name} wins with {combination}."),
            "void": _("Void round: nobody holds a combination; the pot stays."),
            "pay": _("{from} pays {amount} to {to} ({reason})."),
            "takes_pot": _("{to} takes the pot ({amount})."),
            "pay_pot": _("{from} puts {amount} into the pot ({reason})."),
            "pay_pot_short": _("{from} puts {amount} into the pot ({reason}), {short} short."),
            "pay_short": _("{from} pays {amount} to {to} ({reason}), {short} short."),
            "timeout": _("(time-out)"),
        },
        "reason": {
            "ante": _("ante"), "per_card": _("cards left"), "comet": _("the Comet"),
            "pot": _("the pot"), "tricon": _("tricon"), "sequence": _("sequence"),
            "point": _("point"),
        },
        "phase": {
            "not_started": _("not started"), "open": _("opening"), "run": _("run"),
            "blocked": _("run blocked"), "stopping": _("run stopped"),
            "ending": _("going out"), "over": _("over"), "antes": _("antes"),
            "exchange": _("exchange between players"), "talon": _("exchange with the talon"),
            "void": _("void round"), "showdown": _("showdown"),
            "shuffling": _("shuffling"),
        },
        "share": {
            "waiting": _("The cards are shuffled with a share of randomness from each player."),
            "sending": _("Your browser is sending its share of randomness…"),
            "in": _("Your share of randomness is in."),
            "late": _("The cards were dealt before your share arrived."),
        },
        "the_pot": _("the pot"),
        "you": _("you"),
        "seat": _("seat {n}"),
        "bot": _("bot"),
        "botLevels": dict(bot_levels()),
        "dealer": _("dealer"),
        "banker": _("banker"),
        "chips": _("{n} chips"),
        "cards": _("{n} cards"),
        "card_one": _("{n} card"),
        "to_act": _("to play"),
        "your_turn": _("Your turn"),
        "seconds_left": _("{n} seconds left"),
        "deadline": _("until {time}"),
        "comet_chance": _("a chance for the Comet"),
        "comet_for": _("the Comet for {card}"),
        "waiting_card": _("Next card: {card}"),
        "gap": _("The diamond gap: only the Comet goes past the seven of diamonds."),
        "runs": _("Runs on the table"),
        "no_run": _("No card played yet."),
        "comet_payment": _("Comet payment: {n}"),
        "pot": _("Pot: {n}"),
        "talon": _("Talon: {n} cards"),
        "turn": _("Turn {n}"),
        "offer_pending": _("{name} has offered a card to {to}."),
        "result_winner": _("{name} wins the hand."),
        "result_void": _("Nobody wins this round."),
        "result_cards_left": _("{n} cards left"),
        "result_card_left": _("{n} card left"),
        "result_net": _("{name}: {net}"),
        "next_hand": _("Next hand ({n}) →"),
        "next_partie": _("Your next partie at this table →"),
        "next_partie_at": _("Your next partie: table {n} →"),
        "partie_over": _("The partie is over."),
        "to_lobby": _("Back to the lobby"),
        "new_table": _("Open a new table"),
        "comet_note": _("★ marks the Comet, played for {card}; the real card stays in its "
                        "holder's hand until a run needs it."),
        "comet_note_gap": _("★ marks the Comet, played for {card}, the card out of the pack: "
                            "it carried the run over the gap."),
        "soiree_results": _("See the soirée's results"),
        "replay": {
            "step": _("Event {seq} of {count}"),
            "start": _("Before the first event"),
            "by": {"player": _("played by {name}"), "forced": _("forced: the only legal move"),
                   "timeout": _("played by the time-out rule"), "bot": _("played by the bot"),
                   "service": _("by the dealer (the service)")},
            "all_hands": _("Every hand"),
            "whatif_start": _("What if… branch from this step"),
            "whatif_title": _("What if: from event {seq}, {n} move(s) played otherwise"),
            "play_out": _("Play the rest out by the time-out rule"),
            "keep": _("Keep this branch for the dispute"),
            "note": _("Note"),
            "kept": _("Kept as what-if {id}: the ruling can cite it."),
            "leave": _("Back to the hand as played"),
            "branch_over": _("This branch ends here."),
        },
        "refused": _("Refused: {detail}"),
        "reload": _("Somebody played first: the table has been brought up to date."),
        "played_first": _("{name} played first: the table has been brought up to date."),
        "played_for_you": {
            "forced": _("It was your only move, and it was played for you: {move}."),
            "timeout": _("Your time was up: the time-out rule played {move} for you."),
        },
        "pending": _("Your choice ({move}) is kept: it is played when the Comet's chance ends, "
                     "at {time}."),
        "orders": {
            "saved": _("Order saved."),
            "played_mine": _("You played the Comet in this hand: your order waits for the "
                             "next hand in which you hold it."),
            "played": _("The Comet has been played in this hand."),
            "none": _("You do not hold the Comet in this hand: your order waits for a hand "
                      "in which you do."),
            "blocked": _("You hold the Comet: it will be played at the next blocked run of "
                         "{suits}, the suits you hold cards of; otherwise you keep it."),
            "blocked_none": _("You hold the Comet, and no card of a suit it could help you "
                              "with: you keep it."),
            "out": _("You hold the Comet: it will be played when it is your last card "
                     "({n} other card(s) to go)."),
            "out_now": _("You hold the Comet, your last card: it will be played at the next "
                         "chance, and you go out."),
            "first": _("You hold the Comet: it will be played at the next chance."),
            "never": _("You hold the Comet: you keep it to the end (it counts as one card)."),
            "ask": _("You hold the Comet: at each chance you have {n} s to click "
                     "“play the Comet”; otherwise you keep it."),
        },
    }


def bot_levels() -> list[tuple[str, str]]:
    """The bots' levels as a club chooses them, by the bot's name: débutant (any legal move),
    habile (the heuristic player), fort (ISMCTS)."""
    return [("random", pgettext("bot level", "Beginner")),
            ("heuristic", pgettext("bot level", "Skilled")),
            ("ismcts", pgettext("bot level", "Strong"))]


def audit_words(seats: list[dict[str, Any]]) -> dict[str, Any]:
    """The words of the audit page's account of a hand: the table's words for cards, moves and
    payments (the same sentences as its log), and those of the events only a record shows in
    full (the players' shares, the deal, the hand's end). ``seats``: each seat's name as the
    table shows it, and whether it is a bot."""
    table = table_words()
    return {
        **{key: table[key] for key in ("rank", "the_rank", "ranks_plural", "suit", "card",
                                       "combination", "log", "reason", "the_pot")},
        "by": table["replay"]["by"],
        "seats": seats,
        "games": {value: str(label) for value, label in Game.choices},
        "event": {
            "share": _("{name} sends a share of randomness."),
            "deal": _("The cards are dealt, with the shares of randomness of {names}."),
            "deal_alone": _("The cards are dealt, with no player's share of randomness: the "
                            "service alone drew them."),
            "hand_over": _("End of the hand: {name} wins. Net: {nets}."),
            "hand_over_void": _("End of the hand, with no winner. Net: {nets}."),
            "unknown": _("An event this page does not know: {type}."),
        },
    }
