"""Opening a PostgreSQL database for learnloop: one clear error per way it can fail, and migrations applied once
under an advisory lock, so several processes starting together neither run one twice nor see half a schema."""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg import conninfo

from ...errors import ConfigurationError, StoreError
from ..migrations import migrations_for
from .dialect import PgConnection, register_vector

__all__ = ["check_url", "connect", "migrate"]

_MIGRATION_LOCK = 0x6C6C_0002


def check_url(url: str) -> dict[str, Any]:
    """The URL's connection parameters, or a ConfigurationError saying what a URL looks like."""
    try:
        params = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ConfigurationError(
            f"{_redacted(url)} is not a valid PostgreSQL URL ({exc}); "
            "expected postgresql://user:password@host:port/database"
        ) from exc
    if not all(port.isdigit() for port in str(params.get("port") or "5432").split(",")):
        raise ConfigurationError(f"{_redacted(url)} has a port that is not a number")
    if not params.get("dbname"):
        raise ConfigurationError(f"{_redacted(url)} names no database; expected postgresql://user@host:port/database")
    return params


def _redacted(url: str) -> str:
    """The URL without its password, for messages."""
    head, at, tail = url.rpartition("@")
    if not at or ":" not in head.split("//", 1)[-1]:
        return repr(url)
    scheme, _, credentials = head.partition("//")
    return repr(f"{scheme}//{credentials.split(':', 1)[0]}:***@{tail}")


def connect(url: str) -> PgConnection:
    """Open and migrate the database at `url`; the connection runs in autocommit (transactions are explicit)."""
    params = check_url(url)
    where = f"{params.get('host') or 'localhost'}:{params.get('port') or 5432}"
    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=10, application_name="learnloop")
    except psycopg.OperationalError as exc:
        message = str(exc).strip()
        if "does not exist" in message:
            hint = f"create it (CREATE DATABASE {params['dbname']}) or name another one"
        elif "password" in message or "authentication" in message:
            hint = "check the user and password in the URL"
        else:
            hint = f"is the server running at {where} and accepting TCP connections?"
        raise StoreError(f"cannot connect to PostgreSQL at {where}: {hint} ({message})") from exc
    try:
        migrate(raw)
        register_vector(raw)
    except BaseException:
        raw.close()
        raise
    return PgConnection(raw)


def migrate(raw: psycopg.Connection[Any]) -> None:
    """Apply the migrations this database lacks, in one transaction, holding an advisory lock."""
    try:
        with raw.transaction():
            raw.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            _ensure_pgvector(raw)
            raw.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
            )
            applied = {row[0] for row in raw.execute("SELECT version FROM schema_migrations")}
            known = migrations_for("postgres")
            if applied - {m.version for m in known}:
                raise StoreError("the database was written by a newer learnloop; upgrade learnloop to open it")
            for migration in known:
                if migration.version in applied:
                    continue
                raw.execute(migration.sql.encode())  # a script: several statements, no parameters
                raw.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                    (migration.version, migration.name, time.time()),
                )
    except psycopg.Error as exc:
        raise StoreError(f"cannot migrate the PostgreSQL database: {exc}") from exc


def _ensure_pgvector(raw: psycopg.Connection[Any]) -> None:
    if raw.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    if not raw.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
        raise ConfigurationError(
            "the PostgreSQL server has no pgvector extension: install pgvector on the server "
            "(https://github.com/pgvector/pgvector), then CREATE EXTENSION vector in this database"
        )
    try:
        with raw.transaction():
            raw.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise ConfigurationError(
            "pgvector is installed but not enabled in this database, and this user may not enable it: "
            "run CREATE EXTENSION vector in it as a superuser (or the database owner)"
        ) from exc
