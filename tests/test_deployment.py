"""The deployment files match the settings: docker-compose.yml is checked for syntax and shape
(no Docker engine runs on the development machines)."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_docker_compose_runs_postgres_redis_web_live_worker_and_beat() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "web", "live", "proxy", "worker", "beat"}
    # gunicorn for the pages and the API, daphne for the live tables' WebSockets.
    assert "gunicorn" in services["web"]["command"]
    assert "config.wsgi:application" in services["web"]["command"]
    assert "daphne" in services["live"]["command"]
    assert "config.asgi:application" in services["live"]["command"]
    for name in ("postgres", "redis", "web", "live", "worker"):
        assert "healthcheck" in services[name], name
    # The proxy sends /ws/ to the live server and the rest to web.
    nginx = compose["configs"]["nginx"]["content"]
    assert "location /ws/" in nginx and "proxy_pass http://live:8001" in nginx
    assert "proxy_pass http://web:8000" in nginx
    assert "celery -A config worker" in services["worker"]["command"]
    assert "celery -A config beat" in services["beat"]["command"]


def test_the_app_services_get_the_settings_the_code_reads() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    settings_text = (ROOT / "config" / "settings" / "base.py").read_text()
    for name in ("web", "live", "worker", "beat"):
        env = compose["services"][name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://")
        assert env["REDIS_URL"].startswith("redis://")
        assert env["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
        for variable in ("DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "ACADEMIE_SIGNING_KEY"):
            assert variable in env
            assert f'"{variable}"' in settings_text or variable == "DATABASE_URL"
        assert compose["services"][name]["depends_on"]["postgres"]["condition"] == \
            "service_healthy"
