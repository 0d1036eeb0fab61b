from django.urls import include, path

from bench.views import TrivialView

urlpatterns = [
    path("bench/trivial/", TrivialView.as_view(), name="bench-trivial"),
    path("", include("config.urls")),
]
