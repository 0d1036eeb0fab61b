"""Hand-made finished parties with the nets a test chooses: one finished hand whose
``hand_over`` result is those nets (nothing is dealt), at a soirée's table or at a casual
table."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from games.models import Hand, HandEvent, Partie, Seat
from tournaments.models import Soiree, SoireeTable


def finished_partie(*, players: list[Any], nets: list[int], ended_at: datetime,
                    soiree: Soiree | None = None, bots: tuple[int, ...] = ()) -> Partie:
    """A partie over at ``ended_at`` where seat i (``players[i]``, a bot if i is in ``bots``)
    netted ``nets[i]`` in its one hand; a table of ``soiree`` if given, else a casual table."""
    partie = Partie.objects.create(
        game="comet", options={}, club_key=soiree.club.slug if soiree else "casual",
        status=Partie.Status.OVER, move_timeout=timedelta(seconds=30),
        forced_move_delay=timedelta(0), comet_window=timedelta(0),
        pause_between_hands=timedelta(0), ended_at=ended_at)
    for number, player in enumerate(players):
        Seat.objects.create(partie=partie, number=number, player=player,
                            bot="heuristic" if number in bots else "")
    hand = Hand.objects.create(partie=partie, number=1, dealer=0, commitment="0" * 64,
                               status=Hand.Status.OVER, started_at=ended_at, ended_at=ended_at)
    winner = max(range(len(nets)), key=lambda i: nets[i])
    HandEvent.objects.create(
        hand=hand, seq=1, type="hand_over", by=HandEvent.By.SERVICE, prev="0" * 64,
        hash="1" * 64, at=ended_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        payload={"result": {"winner": winner,
                            "net": {str(i): net for i, net in enumerate(nets)}}})
    if soiree is not None:
        SoireeTable.objects.create(soiree=soiree, number=soiree.tables.count() + 1,
                                   partie=partie)
    return partie
