from django.urls import path

from . import views

urlpatterns = [
    path("soirees/", views.SoireeListView.as_view(), name="soiree-list"),
    path("soirees/<int:soiree_id>/", views.SoireeDetailView.as_view(), name="soiree-detail"),
    path("soirees/<int:soiree_id>/register", views.SoireeRegisterView.as_view(),
         name="soiree-register"),
    path("soirees/<int:soiree_id>/checkin", views.SoireeCheckinView.as_view(),
         name="soiree-checkin"),
    path("soirees/<int:soiree_id>/rebuy", views.SoireeRebuyView.as_view(), name="soiree-rebuy"),
    path("soirees/<int:soiree_id>/cashout", views.SoireeCashOutView.as_view(),
         name="soiree-cashout"),
    path("soirees/<int:soiree_id>/seats", views.SoireeSeatChangeView.as_view(),
         name="soiree-seat-change"),
    path("soirees/<int:soiree_id>/announcements", views.SoireeAnnouncementsView.as_view(),
         name="soiree-announcements"),
    path("soirees/<int:soiree_id>/open", views.SoireeOpenView.as_view(), name="soiree-open"),
    path("soirees/<int:soiree_id>/close", views.SoireeCloseView.as_view(), name="soiree-close"),
    path("soirees/<int:soiree_id>/tables", views.SoireeTablesView.as_view(),
         name="soiree-tables"),
    path("soirees/<int:soiree_id>/my-table", views.MyTableView.as_view(), name="soiree-my-table"),
    path("soirees/<int:soiree_id>/standings", views.SoireeStandingsView.as_view(),
         name="soiree-standings"),
    path("seasons/<int:season_id>/standings", views.SeasonStandingsView.as_view(),
         name="season-standings"),
]
