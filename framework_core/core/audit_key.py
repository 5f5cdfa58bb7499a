"""The audit log's key: an HMAC-SHA256 key in LACA's data folder (`audit/key`, mode 0600), which no sandboxed
command can see (the data folder is hidden from commands). Every record's `hash` is the HMAC of its content under
this key, so a record rewritten, removed or forged by someone without the key no longer checks out.

The key is made once, by whichever LACA process first needs it (`O_CREAT|O_EXCL`, never through a symlink);
`read_key` only reads it (`laca audit verify` never makes one)."""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

KEY_FILE = "key"
KEY_BYTES = 32


class KeyProblem(OSError):
    """The key file exists and cannot be used; the message names it and what it means."""


def key_path(log: Path) -> Path:
    return log.parent / KEY_FILE


def mac(key: bytes, data: bytes) -> str:
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def read_key(path: Path) -> bytes | None:
    """The key, or None when there is no key file; KeyProblem when it is there and not a key LACA made."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        why = "it is a symlink, which LACA does not follow" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise KeyProblem(exc.errno or errno.EIO, f"the audit log's key {path} cannot be read ({why})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise KeyProblem(errno.EINVAL, f"the audit log's key {path} is not a regular file")
        raw = os.read(fd, 4 * KEY_BYTES)
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(raw.decode("ascii").strip())
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise KeyProblem(errno.EINVAL, f"the audit log's key {path} is damaged (not {KEY_BYTES} bytes in hex)")
    return key


def load_or_make_key(path: Path) -> bytes:
    """The key, made now (0600, exclusively, synced) when there is none."""
    key = read_key(path)
    if key is not None:
        return key
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    new = secrets.token_bytes(KEY_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:  # another LACA made it meanwhile: use that one
        made = read_key(path)
        if made is None:
            raise KeyProblem(errno.ENOENT, f"the audit log's key {path} vanished while it was made") from None
        return made
    try:
        os.write(fd, new.hex().encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return new
