from django.urls import path

from .views import TrivialView

urlpatterns = [path("", TrivialView.as_view(), name="bench-trivial")]
