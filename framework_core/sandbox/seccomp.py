"""A small seccomp filter for sandboxed commands, as classic BPF bytes that bubblewrap loads (`--seccomp FD`).

Namespaces and dropped capabilities do not cover two old escape routes, so this filter closes them as Codex
and Flatpak do:
- the terminal-injection ioctls `TIOCSTI` and `TIOCLINUX`, which push keystrokes into a terminal that a
  process can still reach (the user's shell would run them after LACA exits);
- the kernel keyring calls (`add_key`, `request_key`, `keyctl`): keyrings are not namespaced, so a
  command could read or plant keys of the user's session.
System calls of a foreign ABI (32-bit x86 on x86_64, x32) are refused outright: they would bypass the
numbers checked here.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

# Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000

TIOCSTI = 0x5412
TIOCLINUX = 0x541C
X32_SYSCALL_BIT = 0x40000000

# Offsets into struct seccomp_data: nr (int), arch (u32), instruction_pointer (u64), args[6] (u64 each).
OFF_NR, OFF_ARCH, OFF_ARG1_LOW = 0, 4, 16 + 8  # little-endian: the low 32 bits of args[1] come first


@dataclass(frozen=True)
class Arch:
    audit_arch: int
    ioctl: int
    keyring: tuple[int, ...]  # add_key, request_key, keyctl
    has_x32: bool = False


ARCHES = {
    "x86_64": Arch(0xC000003E, 16, (248, 249, 250), has_x32=True),
    "aarch64": Arch(0xC00000B7, 29, (217, 218, 219)),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def filter_for(machine: str | None = None) -> bytes | None:
    """The BPF program for this machine's architecture, or None where we have no syscall table for it."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    deny_eperm = RET_ERRNO | errno.EPERM
    deny_enosys = RET_ERRNO | errno.ENOSYS
    prog: list[bytes] = [
        _insn(LD_W_ABS, OFF_ARCH),
        _insn(JEQ_K, arch.audit_arch, jt=1, jf=0),
        _insn(RET_K, deny_enosys),  # a foreign ABI
        _insn(LD_W_ABS, OFF_NR),
    ]
    if arch.has_x32:
        prog += [_insn(JGE_K, X32_SYSCALL_BIT, jt=0, jf=1), _insn(RET_K, deny_enosys)]
    for nr in arch.keyring:
        prog += [_insn(JEQ_K, nr, jt=0, jf=1), _insn(RET_K, deny_enosys)]
    prog += [
        _insn(JEQ_K, arch.ioctl, jt=1, jf=0),
        _insn(RET_K, RET_ALLOW),
        _insn(LD_W_ABS, OFF_ARG1_LOW),
        _insn(JEQ_K, TIOCSTI, jt=2, jf=0),
        _insn(JEQ_K, TIOCLINUX, jt=1, jf=0),
        _insn(RET_K, RET_ALLOW),
        _insn(RET_K, deny_eperm),
    ]
    return b"".join(prog)
