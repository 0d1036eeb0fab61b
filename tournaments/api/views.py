"""The soirée API: organisers create and run soirées and check players in; players register
and see their table; members see the live tables and standings."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.cache import get_conditional_response
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.fields import DateTimeField
from games.api.serializers import BotField, OptionsField
from games.models import Game, Hand, Partie
from games.services import MAX_BUY_IN, MAX_HANDS
from tournaments import permissions, selectors, services
from tournaments.errors import NotMember, NotOrganiser
from tournaments.models import Announcement, Club, Season, Soiree


class SoireeSerializer(serializers.ModelSerializer):
    club = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Soiree
        fields = ["id", "club", "name", "starts_at", "ends_at", "game", "options", "buy_in",
                  "move_timeout", "pause_between_hands", "deals_per_partie", "bots_allowed",
                  "bot_kind", "min_tables", "seating_seed", "status", "opened_at", "closed_at",
                  "standings", "settlement"]


class SoireeCreateSerializer(serializers.Serializer):
    club = serializers.SlugField()
    name = serializers.CharField(max_length=100)
    starts_at = DateTimeField()
    ends_at = DateTimeField()
    game = serializers.ChoiceField(choices=Game.choices)
    options = OptionsField(required=False, default=dict)
    buy_in = serializers.IntegerField(min_value=0, max_value=MAX_BUY_IN, default=50)
    move_timeout = serializers.FloatField(min_value=0.5, max_value=3600, default=30)
    pause_between_hands = serializers.FloatField(min_value=0, max_value=3600, default=5)
    forced_move_delay = serializers.FloatField(min_value=0, max_value=60, default=1)
    comet_window = serializers.FloatField(min_value=0, max_value=15, default=2)
    # A soirée's tables seat people: each must have a second at least to send his share.
    share_window = serializers.FloatField(
        min_value=1, max_value=30, required=False,
        help_text="Seconds a new hand waits for the people's shares of randomness (1 to 30)")
    deals_per_partie = serializers.IntegerField(min_value=1, max_value=MAX_HANDS, required=False,
                                                allow_null=True, default=None)
    bots_allowed = serializers.BooleanField(default=True)
    bot_kind = BotField(default="heuristic")
    min_tables = serializers.IntegerField(min_value=1, max_value=50, default=1)
    season = serializers.IntegerField(required=False, allow_null=True, default=None)

    def validate_ends_at(self, value: Any) -> Any:
        # A soirée that has already ended could never be played: the clock would open and close
        # it at once. One that has started may still be created (it opens on the next tick).
        if value <= timezone.now():
            raise serializers.ValidationError(
                _("%(at)s has already passed: a soirée must end in the future.")
                % {"at": value.isoformat()})
        return value


class CheckinSerializer(serializers.Serializer):
    player = serializers.CharField(max_length=150)


class ChipsRequestSerializer(CheckinSerializer):
    request_id = serializers.UUIDField(help_text="The same id again (a double click) posts once")
    amount = serializers.IntegerField(min_value=1, max_value=1_000_000, required=False,
                                      help_text="Rebuy: the buy-in by default; cash-out: all")


class SeatChangeSerializer(CheckinSerializer):
    change = serializers.ChoiceField(choices=["move", "replace", "remove"],
                                     help_text="move to a table; replace by a bot; remove")
    table = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None,
                                     help_text="the table a move goes to")


class AnnounceSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=200)


class AnnouncementSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    kind = serializers.ChoiceField(choices=Announcement.Kind.choices)
    reason = serializers.ChoiceField(choices=Announcement.Reason.choices)
    player = serializers.CharField(allow_null=True)
    from_table = serializers.IntegerField(allow_null=True)
    to_table = serializers.IntegerField(allow_null=True)
    text = serializers.CharField(help_text="In the request's language")
    done = serializers.BooleanField(help_text="False: carried out after the hand in play")


class AnnouncementsSerializer(serializers.Serializer):
    soiree = serializers.IntegerField()
    announcements = AnnouncementSerializer(many=True)


class ChipsAnswerSerializer(serializers.Serializer):
    soiree = serializers.IntegerField()
    player = serializers.CharField()
    chips = serializers.IntegerField(help_text="What the player holds now")


# -- Answers, for the schema: the views answer plain dicts (selectors, services), and
# tests/test_api_schema.py checks every answer against these shapes.


class RegisteredSerializer(serializers.Serializer):
    soiree = serializers.IntegerField()
    player = serializers.CharField()
    registered = serializers.BooleanField()


class CheckedInSerializer(serializers.Serializer):
    soiree = serializers.IntegerField()
    player = serializers.CharField()
    checked_in_at = serializers.DateTimeField()


class OpenedSerializer(serializers.Serializer):
    soiree = serializers.IntegerField()
    tables = serializers.IntegerField(help_text="how many tables were seated")


class ClosedSerializer(serializers.Serializer):
    soiree = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Soiree.Status.choices)


class TableSeatSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    player = serializers.CharField()
    name = serializers.CharField(help_text="his name as people read it")
    bot = serializers.CharField(allow_null=True, help_text="the bot's kind; null: a person")
    chips = serializers.IntegerField(help_text="the seat's chips now")
    away = serializers.BooleanField(help_text="the player has left the table for now")


class CurrentHandSerializer(serializers.Serializer):
    hand = serializers.UUIDField()
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Hand.Status.choices)
    seq = serializers.IntegerField()
    deadline = serializers.DateTimeField(allow_null=True)


class TableSerializer(serializers.Serializer):
    """A table of the evening (``selectors.soiree_tables``): public facts only."""

    table = serializers.IntegerField()
    round = serializers.IntegerField()
    partie = serializers.UUIDField()
    status = serializers.ChoiceField(choices=Partie.Status.choices)
    seats = TableSeatSerializer(many=True)
    hands_played = serializers.IntegerField()
    current_hand = CurrentHandSerializer(allow_null=True)


class TablesSerializer(serializers.Serializer):
    soiree = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Soiree.Status.choices)
    hands_over = serializers.IntegerField(help_text="the hands of the evening over, every table")
    tables = TableSerializer(many=True)


class MyTableSerializer(serializers.Serializer):
    soiree = serializers.IntegerField()
    table = TableSerializer(allow_null=True, help_text="null: the requester sits at no table")


class _TallySerializer(serializers.Serializer):
    """A player's line of standings, the soirée's or the season's (services)."""

    player = serializers.CharField()
    net = serializers.IntegerField(help_text="chips won or lost")
    hands_won = serializers.IntegerField()
    comets = serializers.IntegerField()
    tricons = serializers.IntegerField()


class StandingSerializer(_TallySerializer):
    hands = serializers.IntegerField(help_text="hands dealt to him, a voided one not counted")
    name = serializers.CharField(required=False, help_text="his name as people read it")


class StandingsSerializer(serializers.Serializer):
    players = StandingSerializer(many=True, help_text="the people, by net then hands won")
    bots = StandingSerializer(many=True, required=False,
                              help_text="the club's bots, apart: they play the club's chips")
    computed_at = serializers.DateTimeField()


class SoireeStandingsSerializer(serializers.Serializer):
    soiree = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Soiree.Status.choices)
    standings = StandingsSerializer(allow_null=True, help_text="null until the soirée opens")
    settlement = serializers.DictField(allow_null=True,
                                       help_text="once closed: each party's net, the "
                                                 "transfers that settle them, and the "
                                                 "corrections rulings added since; the party "
                                                 "\"#club\" is the club, which takes or pays "
                                                 "its bots' nets")


class SeasonStandingSerializer(_TallySerializer):
    soirees = serializers.IntegerField()


class SeasonStandingsSerializer(serializers.Serializer):
    season = serializers.IntegerField()
    name = serializers.CharField()
    standings = SeasonStandingSerializer(many=True)


def _organiser(request: Request, club: Club) -> None:
    if not permissions.may_organise(request.user, club.pk):
        raise NotOrganiser(_("Only an organiser of %(club)s may do this.") % {"club": club.name})


def _member(request: Request, soiree: Soiree) -> None:
    if not permissions.is_member(request.user, soiree.club_id):
        raise NotMember(_("Only members of %(club)s may see this soirée.")
                        % {"club": soiree.club.name})


def _soiree(soiree_id: int) -> Soiree:
    return get_object_or_404(Soiree.objects.select_related("club"), pk=soiree_id)


class SoireeListView(ListAPIView[Any]):
    """The requester's clubs' soirées, newest first, a page at a time (config.pagination)."""

    serializer_class = SoireeSerializer

    def get_queryset(self) -> QuerySet[Soiree]:
        return selectors.soiree_list(user=self.request.user).order_by("-starts_at", "-pk")

    @extend_schema(request=SoireeCreateSerializer, responses={201: SoireeSerializer})
    def post(self, request: Request) -> Response:
        data = SoireeCreateSerializer(data=request.data)
        # A time without an offset is the club's: read it in the club's time zone.
        named = request.data.get("club") if isinstance(request.data, dict) else None
        home = Club.objects.filter(slug=named).first() if isinstance(named, str) else None
        with timezone.override(home.zone() if home else None):
            data.is_valid(raise_exception=True)
        v: dict[str, Any] = dict(data.validated_data)
        # Named in the body, not the path: an unknown one is a refused field (400), not a 404.
        club = Club.objects.filter(slug=v.pop("club")).first()
        if club is None:
            raise serializers.ValidationError({"club": ["no such club"]})
        _organiser(request, club)
        _durations(v)
        season = v.pop("season")
        season_obj = Season.objects.filter(pk=season, club=club).first() if season else None
        if season and season_obj is None:
            raise serializers.ValidationError({"season": [f"no season {season} in {club.name}"]})
        soiree = services.soiree_create(club=club, season=season_obj, created_by=request.user,
                                        **v)
        return Response(SoireeSerializer(soiree).data, status=status.HTTP_201_CREATED)


class SoireeUpdateSerializer(SoireeCreateSerializer):
    club = None  # type: ignore[assignment]  # a soirée stays in its club


def _durations(v: dict[str, Any]) -> dict[str, Any]:
    for key in ("move_timeout", "pause_between_hands", "forced_move_delay", "comet_window",
                "share_window"):
        if key in v:
            v[key] = timedelta(seconds=v[key])
    return v


class SoireeDetailView(APIView):
    @extend_schema(responses=SoireeSerializer)
    def get(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _member(request, soiree)
        return Response(SoireeSerializer(soiree).data)

    @extend_schema(request=SoireeUpdateSerializer, responses=SoireeSerializer)
    def patch(self, request: Request, soiree_id: int) -> Response:
        """An organiser changes a soirée that has not opened yet (only the fields sent)."""
        soiree = _soiree(soiree_id)
        _organiser(request, soiree.club)
        data = SoireeUpdateSerializer(data=request.data, partial=True)
        with timezone.override(soiree.club.zone()):  # a time without offset is the club's
            data.is_valid(raise_exception=True)
        v = _durations(dict(data.validated_data))
        if "season" in v:
            season = v["season"]
            v["season"] = Season.objects.filter(pk=season, club=soiree.club).first()
            if season and v["season"] is None:
                raise serializers.ValidationError(
                    {"season": [f"no season {season} in {soiree.club.name}"]})
        soiree = services.soiree_update(soiree=soiree, **v)
        return Response(SoireeSerializer(soiree).data)


class SoireeRegisterView(APIView):
    """A player registers himself for a soirée of his club."""

    @extend_schema(request=None, responses={201: RegisteredSerializer})
    def post(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        services.registration_add(soiree=soiree, user=request.user)
        return Response({"soiree": soiree.pk, "player": request.user.get_username(),
                         "registered": True}, status=status.HTTP_201_CREATED)


class SoireeUnregisterView(APIView):
    """A member takes his name off a soirée that has not opened yet."""

    @extend_schema(request=None, responses=RegisteredSerializer)
    def post(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        services.registration_remove(soiree=soiree, user=request.user)
        return Response({"soiree": soiree.pk, "player": request.user.get_username(),
                         "registered": False})


class CheckinUndoSerializer(CheckinSerializer):
    request_id = serializers.UUIDField(help_text="The same id again (a double click) undoes once")


class CheckinUndoneSerializer(serializers.Serializer):
    soiree = serializers.IntegerField()
    player = serializers.CharField()
    checked_in = serializers.BooleanField()


class SoireeCheckinUndoView(APIView):
    """An organiser undoes a check-in before the seating: the buy-in goes back to the bank by
    a reversing entry; the player stays registered."""

    @extend_schema(request=CheckinUndoSerializer, responses=CheckinUndoneSerializer)
    def post(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _organiser(request, soiree.club)
        data = CheckinUndoSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        user = _player(v["player"])
        services.checkin_undo(soiree=soiree, user=user, request_id=v["request_id"])
        return Response({"soiree": soiree.pk, "player": user.get_username(),
                         "checked_in": False})


class SoireeCancelView(APIView):
    """An organiser cancels a soirée that has not opened: it never opens, and its buy-ins are
    reversed. An open one is closed instead (``…/close``)."""

    @extend_schema(request=None, responses=ClosedSerializer)
    def post(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _organiser(request, soiree.club)
        soiree = services.soiree_cancel(soiree=soiree, at=timezone.now())
        return Response({"soiree": soiree.pk, "status": soiree.status})


class SoireeCheckinView(APIView):
    """An organiser checks a player in (his buy-in is issued)."""

    @extend_schema(request=CheckinSerializer, responses={201: CheckedInSerializer})
    def post(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _organiser(request, soiree.club)
        data = CheckinSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = get_user_model().objects.filter(username=data.validated_data["player"]).first()
        if user is None:
            raise serializers.ValidationError({"player": "no such player"})
        registration = services.checkin(soiree=soiree, user=user, at=timezone.now())
        return Response({"soiree": soiree.pk, "player": user.get_username(),
                         "checked_in_at": registration.checked_in_at},
                        status=status.HTTP_201_CREATED)


class _ChipsView(APIView):
    """An organiser's rebuy or cash-out for a checked-in player, through the ledger."""

    service: Any = None

    @extend_schema(request=ChipsRequestSerializer, responses={201: ChipsAnswerSerializer})
    def post(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _organiser(request, soiree.club)
        data = ChipsRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        user = get_user_model().objects.filter(username=v["player"]).first()
        if user is None:
            raise serializers.ValidationError({"player": "no such player"})
        chips = type(self).service(soiree=soiree, user=user, request_id=v["request_id"],
                                   amount=v.get("amount"))
        return Response({"soiree": soiree.pk, "player": user.get_username(), "chips": chips},
                        status=status.HTTP_201_CREATED)


class SoireeRebuyView(_ChipsView):
    service = staticmethod(services.rebuy)


class SoireeCashOutView(_ChipsView):
    service = staticmethod(services.cash_out)


def _player(name: str) -> Any:
    user = get_user_model().objects.filter(username=name).first()
    if user is None:
        raise serializers.ValidationError({"player": "no such player"})
    return user


class SoireeSeatChangeView(APIView):
    """An organiser moves a seated player to another table, or has him replaced by a bot or
    removed; carried out between hands, and announced."""

    @extend_schema(request=SeatChangeSerializer, responses={202: AnnouncementSerializer})
    def post(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _organiser(request, soiree.club)
        data = SeatChangeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        change = services.seat_change(soiree=soiree, user=_player(v["player"]), kind=v["change"],
                                      to_table=v["table"], at=timezone.now())
        return Response(selectors.announcement_row(change), status=status.HTTP_202_ACCEPTED)


class SoireeAnnouncementsView(APIView):
    """What the room is told, newest first; an organiser adds his own words."""

    @extend_schema(responses=AnnouncementsSerializer)
    def get(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _member(request, soiree)
        return Response({"soiree": soiree.pk,
                         "announcements": selectors.announcements(soiree=soiree)})

    @extend_schema(request=AnnounceSerializer, responses={201: AnnouncementSerializer})
    def post(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _organiser(request, soiree.club)
        data = AnnounceSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        made = services.announce(soiree=soiree, text=data.validated_data["text"],
                                 at=timezone.now())
        return Response(selectors.announcement_row(made), status=status.HTTP_201_CREATED)


class SoireeOpenView(APIView):
    @extend_schema(request=None, responses=OpenedSerializer)
    def post(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _organiser(request, soiree.club)
        tables = services.soiree_open(soiree=soiree, at=timezone.now())
        return Response({"soiree": soiree.pk, "tables": len(tables)})


class SoireeCloseView(APIView):
    @extend_schema(request=None, responses=ClosedSerializer)
    def post(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _organiser(request, soiree.club)
        services.soiree_close_now(soiree=soiree, at=timezone.now())
        soiree.refresh_from_db()
        return Response({"soiree": soiree.pk, "status": soiree.status})


class TablesQuerySerializer(serializers.Serializer):
    partie = serializers.UUIDField(required=False,
                                   help_text="only this partie's table (the one that changed)")
    history = serializers.BooleanField(
        required=False, default=False,
        help_text="every partie of the evening; by default each table's latest partie only")


class SoireeTablesView(APIView):
    @extend_schema(responses=TablesSerializer, parameters=[TablesQuerySerializer])
    def get(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _member(request, soiree)
        query = TablesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response({"soiree": soiree.pk, "status": soiree.status,
                         "hands_over": selectors.projection_hands(soiree=soiree) or 0,
                         "tables": selectors.soiree_tables(
                             soiree=soiree, partie=query.validated_data.get("partie"),
                             history=query.validated_data["history"])})


class MyTableView(APIView):
    @extend_schema(responses=MyTableSerializer)
    def get(self, request: Request, soiree_id: int) -> Response:
        soiree = _soiree(soiree_id)
        _member(request, soiree)
        return Response({"soiree": soiree.pk,
                         "table": selectors.table_of(soiree=soiree, user=request.user)})


class SoireeStandingsView(APIView):
    """The soirée's standings, read from its read models. The answer carries an ETag of their
    version: a client that sends it back (``If-None-Match``; a browser's fetch does) while
    nothing changed is answered 304 for the price of one row."""

    @extend_schema(responses={200: SoireeStandingsSerializer, 304: None})
    def get(self, request: Request, soiree_id: int) -> Response | HttpResponseBase:
        soiree = _soiree(soiree_id)
        _member(request, soiree)
        etag = (f'"standings-{soiree.pk}-{soiree.status}-'
                f'{selectors.projection_version(soiree=soiree)}"')
        unchanged = get_conditional_response(request, etag=etag)
        if unchanged is not None:
            return unchanged
        answer = Response({"soiree": soiree.pk, "status": soiree.status,
                           "standings": selectors.soiree_standings(soiree=soiree),
                           "settlement": soiree.settlement})
        answer["ETag"] = etag
        answer["Cache-Control"] = "private, no-cache"  # asked again each time, 304 if unchanged
        return answer


class SeasonStandingsView(APIView):
    @extend_schema(responses=SeasonStandingsSerializer)
    def get(self, request: Request, season_id: int) -> Response:
        season = get_object_or_404(Season, pk=season_id)
        if not permissions.is_member(request.user, season.club_id):
            raise NotMember(_("Only members of this club may see its season."))
        return Response({"season": season.pk, "name": season.name,
                         "standings": selectors.season_standings(season=season)})
