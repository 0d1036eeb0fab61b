from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config.views import api_not_found, healthz, readyz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("api/", include("games.api.urls")),
    path("api/", include("tournaments.api.urls")),
    path("api/ledger/", include("ledger.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI, its start script a file of its own (the split view), not inline; its page
    # keeps an inline <style>: styles only.
    path("api/docs/", csp_update({"style-src": [UNSAFE_INLINE]})(
        SpectacularSwaggerSplitView.as_view(url_name="schema")), name="swagger"),
    re_path(r"^api/", api_not_found),  # last of the API's: a JSON 404, not the HTML page
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the header's switch
    path("", include("frontend.urls")),
]
