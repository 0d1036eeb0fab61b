from django.conf import settings
from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.i18n import JavaScriptCatalog

from . import accounts, calendar, members, organiser, ratings, results, views

urlpatterns = [
    # Browsers ask for /favicon.ico whatever the page names: the same icon, for good.
    path("favicon.ico", views.favicon),
    # The pages' scripts' words with plurals (ngettext), from the djangojs catalogue.
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("", views.lobby, name="lobby"),
    path("soirees/new", organiser.soiree_new, name="soiree-new"),
    path("soirees/<int:soiree_id>/", views.soiree_page, name="soiree-page"),
    path("soirees/<int:soiree_id>/edit", organiser.soiree_edit, name="soiree-edit"),
    path("soirees/<int:soiree_id>/manage", organiser.soiree_manage, name="soiree-manage"),
    path("soirees/<int:soiree_id>/members", members.soiree_members, name="soiree-members"),
    path("soirees/<int:soiree_id>/room", results.room_screen, name="soiree-room"),
    path("soirees/<int:soiree_id>/seating", results.seating_sheet, name="soiree-seating"),
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
    path("clubs/<int:club_id>/members", accounts.club_members, name="club-members"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/invitation/<str:secret>/", accounts.invitation_page, name="invitation"),
    # Django's own password views, with the site's templates (the admin's, found first under
    # the same names, would show the admin's look).
    path("accounts/password/change/", auth_views.PasswordChangeView.as_view(
        template_name="frontend/accounts/password_change_form.html"), name="password_change"),
    path("accounts/password/change/done/", auth_views.PasswordChangeDoneView.as_view(
        template_name="frontend/accounts/password_change_done.html"),
        name="password_change_done"),
    path("accounts/password/reset/", auth_views.PasswordResetView.as_view(
        template_name="frontend/accounts/password_reset_form.html",
        email_template_name="frontend/accounts/password_reset_email.txt",
        subject_template_name="frontend/accounts/password_reset_subject.txt",
        extra_context={"sends_email": settings.ACADEMIE_SENDS_EMAIL}),
        name="password_reset"),
    path("accounts/password/reset/sent/", auth_views.PasswordResetDoneView.as_view(
        template_name="frontend/accounts/password_reset_done.html"), name="password_reset_done"),
    path("accounts/password/reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(
        template_name="frontend/accounts/password_reset_confirm.html"),
        name="password_reset_confirm"),
    path("accounts/password/reset/done/", auth_views.PasswordResetCompleteView.as_view(
        template_name="frontend/accounts/password_reset_complete.html"),
        name="password_reset_complete"),
]
