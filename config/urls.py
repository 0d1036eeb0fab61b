from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config.views import api_not_found

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("games.api.urls")),
    path("api/", include("tournaments.api.urls")),
    path("api/ledger/", include("ledger.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger"),
    re_path(r"^api/", api_not_found),  # last of the API's: a JSON 404, not the HTML page
    path("", include("frontend.urls")),
]
