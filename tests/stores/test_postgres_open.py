"""Opening the PostgreSQL backend: a URL selects it, and each way opening can fail is one error naming the fix."""

from __future__ import annotations

import socket
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

import learnloop
from learnloop.config import Settings
from learnloop.errors import ConfigurationError, StoreError
from learnloop.stores import open_store
from learnloop.stores.postgres import PostgresStore
from tests.support.postgres import cluster, database_url, drop_databases

pytestmark = pytest.mark.postgres


def _open(url: str) -> PostgresStore:
    store = open_store(url, Settings(), embedding_model="test:model", dimension=4)
    assert isinstance(store, PostgresStore)
    return store


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[str]:
    """A database of the test's own (dropped after it)."""
    yield database_url(tmp_path)
    drop_databases()


async def test_a_postgres_url_opens_the_postgres_backend(fresh: str) -> None:
    for url in (fresh, fresh.replace("postgresql://", "postgres://", 1)):
        store = _open(url)
        await store.start()
        assert await store.list_vocabularies("t") == []
        await store.aclose()


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("postgresql://[::1/learnloop", "not a valid PostgreSQL URL"),
        ("postgresql://localhost:port/learnloop", "port that is not a number"),
        ("postgresql://localhost", "names no database"),
    ],
)
def test_a_bad_url_is_a_configuration_error_at_open(url: str, says: str) -> None:
    with pytest.raises(ConfigurationError, match=says):
        learnloop.open(url)


def test_the_password_stays_out_of_the_message() -> None:
    with pytest.raises(ConfigurationError) as caught:
        _open("postgresql://me:s3cret@localhost:x/db")
    assert "s3cret" not in str(caught.value)


async def test_a_refused_connection_asks_whether_the_server_runs() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free: nothing listens on it once the probe closes
    store = _open(f"postgresql://postgres@127.0.0.1:{port}/learnloop")
    with pytest.raises(StoreError, match=f"is the server running at 127.0.0.1:{port}"):
        await store.start()
    await store.aclose()


async def test_a_missing_database_says_to_create_it() -> None:
    store = _open(cluster().url("no_such_database"))
    with pytest.raises(StoreError, match="CREATE DATABASE no_such_database"):
        await store.start()
    await store.aclose()


async def test_a_server_without_pgvector_says_to_install_it(fresh: str) -> None:
    # PostgreSQL 18 looks for extensions on `extension_control_path`: pointing it at an empty folder is a server
    # without pgvector installed. The fresh database has it, so take another one without.
    with psycopg.connect(cluster().admin_url, autocommit=True) as admin:
        admin.execute("CREATE DATABASE bare")
    try:
        options = urllib.parse.quote("-c extension_control_path=/nonexistent")
        store = _open(f"{cluster().url('bare')}?options={options}")
        with pytest.raises(ConfigurationError, match="install pgvector on the server"):
            await store.start()
        await store.aclose()
    finally:
        with psycopg.connect(cluster().admin_url, autocommit=True) as admin:
            admin.execute("DROP DATABASE bare WITH (FORCE)")


async def test_pgvector_installed_but_not_enabled_names_create_extension() -> None:
    """A user who may not create the extension is told the statement a superuser must run."""
    admin_url = cluster().admin_url
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute("CREATE ROLE plain LOGIN")
        admin.execute("CREATE DATABASE plain_db")
    try:
        with psycopg.connect(cluster().url("plain_db"), autocommit=True) as conn:
            conn.execute("GRANT CREATE ON SCHEMA public TO plain")
        store = _open(cluster().url("plain_db").replace("postgres@", "plain@", 1))
        with pytest.raises(ConfigurationError, match="CREATE EXTENSION vector"):
            await store.start()
        await store.aclose()
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute("DROP DATABASE plain_db WITH (FORCE)")
            admin.execute("DROP ROLE plain")
