from django.urls import path

from . import views

urlpatterns = [
    path("parties/", views.PartieListView.as_view(), name="partie-list"),
    path("parties/<uuid:partie_id>/", views.PartieDetailView.as_view(), name="partie-detail"),
    path("parties/<uuid:partie_id>/answer", views.PartieAnswerView.as_view(),
         name="partie-answer"),
    path("parties/<uuid:partie_id>/close", views.PartieCloseView.as_view(), name="partie-close"),
    path("parties/<uuid:partie_id>/away", views.PartieAwayView.as_view(), name="partie-away"),
    path("parties/<uuid:partie_id>/comet-order", views.PartieCometOrderView.as_view(),
         name="partie-comet-order"),
    path("keys", views.SigningKeysView.as_view(), name="signing-keys"),
    path("invitations/", views.InvitationListView.as_view(), name="invitation-list"),
    path("hands/<uuid:hand_id>/", views.HandDetailView.as_view(), name="hand-detail"),
    path("hands/<uuid:hand_id>/moves", views.HandMovesView.as_view(), name="hand-moves"),
    path("hands/<uuid:hand_id>/share", views.HandShareView.as_view(), name="hand-share"),
    path("hands/<uuid:hand_id>/events", views.HandEventsView.as_view(), name="hand-events"),
    path("hands/<uuid:hand_id>/record", views.HandRecordView.as_view(), name="hand-record"),
    path("hands/<uuid:hand_id>/replay", views.HandReplayView.as_view(), name="hand-replay"),
    path("hands/<uuid:hand_id>/verify", views.HandVerifyView.as_view(), name="hand-verify"),
]
