"""Exit 0 if the PostgreSQL server of the given URL answers, 1 otherwise."""

import sys
from urllib.parse import urlparse

import psycopg

url = urlparse(sys.argv[1])
try:
    psycopg.connect(
        host=url.hostname, port=url.port or 5432, user=url.username or "postgres",
        dbname="postgres", connect_timeout=3,
    ).close()
except psycopg.Error:
    sys.exit(1)
