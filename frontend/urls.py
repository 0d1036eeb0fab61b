from django.contrib.auth import views as auth_views
from django.urls import path

from . import calendar, organiser, ratings, results, views

urlpatterns = [
    path("", views.lobby, name="lobby"),
    path("soirees/new", organiser.soiree_new, name="soiree-new"),
    path("soirees/<int:soiree_id>/", views.soiree_page, name="soiree-page"),
    path("soirees/<int:soiree_id>/edit", organiser.soiree_edit, name="soiree-edit"),
    path("soirees/<int:soiree_id>/manage", organiser.soiree_manage, name="soiree-manage"),
    path("soirees/<int:soiree_id>/room", results.room_screen, name="soiree-room"),
    path("soirees/<int:soiree_id>/results", results.results_page, name="soiree-results"),
    path("soirees/<int:soiree_id>/chips.svg", results.chips_chart, name="soiree-chips-chart"),
    path("soirees/<int:soiree_id>/results.pdf", results.results_pdf, name="soiree-results-pdf"),
    path("soirees/<int:soiree_id>/standings.csv", results.standings_csv,
         name="soiree-standings-csv"),
    path("soirees/<int:soiree_id>/settlement.csv", results.settlement_csv,
         name="soiree-settlement-csv"),
    path("seasons/<int:season_id>/", results.season_page, name="season-page"),
    path("seasons/<int:season_id>/players/<int:user_id>/", ratings.season_player_page,
         name="season-player"),
    path("seasons/<int:season_id>/players/<int:user_id>/rating.svg", ratings.rating_chart,
         name="season-player-chart"),
    path("hands/", views.hands_search, name="hands-search"),
    path("hands/<uuid:hand_id>/", views.table_page, name="table-page"),
    path("hands/<uuid:hand_id>/replay", views.replay_page, name="replay-page"),
    path("hands/<uuid:hand_id>/audit", views.audit_page, name="audit-page"),
    path("hands/<uuid:hand_id>/record.json", views.record_download, name="record-download"),
    path("calendar/<str:token>.ics", calendar.calendar_ics, name="calendar-ics"),
    path("calendar/<int:club_id>/revoke", calendar.calendar_revoke, name="calendar-revoke"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
]
