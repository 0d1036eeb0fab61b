"""The ledger API, mounted under api/ledger/ by config/urls.py."""

from django.urls import path

from ledger.api import views

app_name = "ledger"

urlpatterns = [
    path("me/wallets/", views.MyWalletsView.as_view(), name="my-wallets"),
    path("me/wallets/<slug:club_key>/", views.MyBalanceView.as_view(), name="my-balance"),
    path(
        "me/wallets/<slug:club_key>/statement/",
        views.MyStatementView.as_view(),
        name="my-statement",
    ),
    path("clubs/<slug:club_key>/accounts/", views.ClubAccountsView.as_view(), name="club-accounts"),
    path(
        "clubs/<slug:club_key>/accounts/<int:account_id>/",
        views.ClubAccountBalanceView.as_view(),
        name="club-account-balance",
    ),
    path(
        "clubs/<slug:club_key>/accounts/<int:account_id>/statement/",
        views.ClubAccountStatementView.as_view(),
        name="club-account-statement",
    ),
    path(
        "clubs/<slug:club_key>/trial-balance/",
        views.ClubTrialBalanceView.as_view(),
        name="club-trial-balance",
    ),
    path(
        "clubs/<slug:club_key>/settlement/",
        views.ClubSettlementView.as_view(),
        name="club-settlement",
    ),
]
