"""What a process writes beside the database for a while, and who may remove it: the folder an ANN graph is built in
by a child process (``ann_build``), and the temporary file an index file is written under before its rename
(``vector_index``).

**Liveness is proved by a lock, not by a pid.** The process that makes one takes an exclusive ``flock`` on it (the
``lock`` file inside a build folder; a temporary file itself) and holds it for as long as it lives; a sweep removes
only what it can lock (``LOCK_EX | LOCK_NB``). A lock belongs to an open file, not to a pid, so this holds between
processes in different PID namespaces (two containers sharing a volume, where the other's pid is dead here, or is
pid 1, always alive here), and the kernel drops it however the process ends. A forked copy of the maker shares the
lock: the folder stays while the copy runs (conservative); a child it execs does not (the descriptor is not
inheritable). The pid stays in the names, for a human reading the folder. Where ``flock`` is missing (Windows) or
refused by the file system, the pid decides, as it did before: removed when no process of that pid runs here.

A maker and a sweep may meet: the maker locks what it has just made and then checks that it is still there (a sweep
that locked it first, finding it unlocked, removes it while holding the lock, and the maker's lock waits for that);
when it is gone it makes another. An empty build folder (its maker has not made its lock yet, or died before) is
removed with ``rmdir``, which fails once the lock file exists; the maker then makes another folder.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

if sys.platform != "win32":
    import fcntl

__all__ = ["BUILD", "BuildFolder", "replace", "sweep_builds", "sweep_temporaries", "temporary"]

BUILD = ".afteraction-build-"  # a build folder's name: BUILD, the maker's pid, "-", a random part
LOCK = "lock"  # the file in a build folder whose lock says its maker lives
_TRIES = 5


class BuildFolder:
    """A new build folder in ``place`` (None: the system's temporary folder), locked until ``remove``. OSError
    when none can be made."""

    def __init__(self, place: Path | None) -> None:
        self.maker = os.getpid()
        for _ in range(_TRIES):
            self.path = Path(tempfile.mkdtemp(prefix=f"{BUILD}{self.maker}-", dir=place))
            try:
                self._fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            except FileNotFoundError:  # a sweep took the empty folder for one whose maker died: make another
                continue
            if _claim(self.path / LOCK, self._fd):
                return
            os.close(self._fd)
        raise OSError(f"{place or tempfile.gettempdir()}: each build folder made was removed by a sweep at once")

    def remove(self) -> None:
        """Remove the folder with what it holds, by the process that made it only: a forked copy of it that exits,
        as a pre-fork server's worker does, never removes its maker's live build."""
        if os.getpid() == self.maker:
            shutil.rmtree(self.path, ignore_errors=True)
            os.close(self._fd)


def sweep_builds(place: Path, *, strict: bool = False) -> list[Path]:
    """Remove the build folders in ``place`` whose maker has ended, with what they hold; the ones removed. With
    ``strict``, OSError when one of them cannot be removed (else it is left to the next sweep)."""
    removed = []
    for folder in sorted(place.glob(f"{BUILD}*-*")):
        if _sweep_folder(folder, strict=strict):
            removed.append(folder)
    return removed


def temporary(name: str, tag: str) -> str:
    """The name a file ``name`` is written under before its rename: ``tag`` is the writer's pid and a random part
    (two hosts in two containers may both be pid 1), or ``*`` in a pattern that matches them all."""
    return f".{name}.{tag}.tmp"


def replace(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it and a rename, holding the temporary file's
    lock throughout. When the write or the rename fails, the temporary file goes and the error is raised: a failed
    save leaves nothing behind (on a full disk, it held the space the store needed next)."""
    for _ in range(_TRIES):
        spare = path.with_name(temporary(path.name, f"{os.getpid()}-{secrets.token_hex(4)}"))
        fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        if _claim(spare, fd):
            break
        os.close(fd)
    else:
        raise OSError(f"{path.parent}: each temporary file made was removed by a sweep at once")
    try:
        with open(fd, "wb", closefd=False) as stream:
            stream.write(data)
        os.replace(spare, path)
    except BaseException:
        with contextlib.suppress(OSError):
            spare.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)


def sweep_temporaries(folder: Path, patterns: Iterable[str]) -> list[Path]:
    """Remove the temporary files in ``folder`` matching ``patterns`` that no live process writes (a save killed,
    or one that failed before this version removed what it wrote); the ones removed."""
    removed = []
    for pattern in patterns:
        for path in sorted(folder.glob(pattern)):
            fd = _open(path)
            if fd is None:
                continue
            try:
                pid = path.name.removesuffix(".tmp").rsplit(".", 1)[-1].split("-", 1)[0]
                if _unheld(fd, pid) and _same(path, fd):
                    path.unlink(missing_ok=True)
                    removed.append(path)
            except OSError:
                continue
            finally:
                os.close(fd)
    return removed


def _sweep_folder(folder: Path, *, strict: bool) -> bool:
    """Remove ``folder`` if its maker has ended: True when it went."""
    lock = folder / LOCK
    fd: int | None = None
    try:
        try:
            fd = os.open(lock, os.O_RDWR)
        except FileNotFoundError:
            if sys.platform != "win32" and _rmdir(folder):
                return True  # empty: its maker died before locking it, or is about to and will make another
            with contextlib.suppress(FileNotFoundError):  # none: a folder of a version without locks, the pid decides
                fd = os.open(lock, os.O_RDWR)  # made meanwhile
    except OSError:  # another user's: whether its maker lives cannot be told (nor could it be removed)
        return False
    try:
        if not _unheld(fd, folder.name.removeprefix(BUILD).split("-", 1)[0]):
            return False
        try:
            shutil.rmtree(folder)  # under the lock: a maker that locks it next finds it gone
        except OSError:
            if strict and os.path.lexists(folder):
                raise
        return not os.path.lexists(folder)
    finally:
        if fd is not None:
            os.close(fd)


def _rmdir(folder: Path) -> bool:
    try:
        folder.rmdir()
    except OSError:
        return False
    return True


def _open(path: Path) -> int | None:
    try:
        return os.open(path, os.O_RDWR)  # written to by no one: a lock asks for it on some file systems (NFS)
    except OSError:
        return None


def _claim(path: Path, fd: int) -> bool:
    """Lock the file just made at ``path`` (open as ``fd``): False when a sweep removed it meanwhile. The lock waits
    only for a sweep that locked it first, while it removes it."""
    if sys.platform != "win32":
        with contextlib.suppress(OSError):  # a file system without locks: the pid decides
            fcntl.flock(fd, fcntl.LOCK_EX)
    return _same(path, fd)


def _unheld(fd: int | None, pid: str) -> bool:
    """Whether the maker of the file open as ``fd`` (None: a folder with no lock file) has ended: its lock can be
    taken, or (no lock to ask) no process ``pid`` runs here."""
    if fd is not None and sys.platform != "win32":
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError:
            pass
        else:
            return True
    return pid.isdigit() and not _alive(int(pid))


def _same(path: Path, fd: int) -> bool:
    try:
        there, held = os.stat(path), os.fstat(fd)
    except FileNotFoundError:
        return False
    return (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino)


def _alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill there ends the process whatever the signal: assume it runs
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it runs, as another user
        return True
    return True
