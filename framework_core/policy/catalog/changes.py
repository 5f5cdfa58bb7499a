"""Programs that change the system: those whose name alone decides (privilege, disks, power, the kernel), and
those judged by what their targets mean (`policy/programs.py`: deleting, writing, modes and owners,
scheduling, containers; rsync's network use is its `host:path` operands, in `policy/network.py`). One
entry per program; the judges are code because a target's meaning is.
"""

from __future__ import annotations

from framework_core.policy.catalog.entry import Entry, fixed, judged

PROGRAMS: list[Entry] = [
    *fixed("sudo su doas pkexec runas sudoedit run0 calife ksu", "dangerous", "privilege escalation"),
    *fixed("mkfs mke2fs mkswap wipefs fdisk sfdisk cfdisk parted sgdisk gdisk blkdiscard mkdosfs mkntfs cryptsetup "
           "zpool diskutil hdparm badblocks losetup dmsetup", "dangerous", "formats, repartitions or maps a disk"),
    *fixed("shutdown reboot halt poweroff kexec", "dangerous", "shuts down or reboots the machine"),
    *fixed("insmod modprobe rmmod nsenter setcap pivot_root switch_root", "dangerous",
           "{name} changes the kernel, capabilities or namespaces of the host"),
    *fixed("chattr mount umount swapon swapoff chroot unshare setfacl useradd usermod userdel passwd chpasswd "
           "groupadd visudo iptables nft ufw ip6tables", "ask", "{name} changes the system"),
    *judged("rm", "rm"),
    *[p for n in ("rmdir", "unlink", "touch", "mkdir", "truncate", "mkfifo") for p in judged(n, n)],
    *judged("mv ln install", "copy"), *judged("cp rsync", "copy", traits=frozenset({"reads-trees"})),
    *judged("tee", "tee"), *judged("dd", "dd"), *judged("shred", "shred"), *judged("chmod", "chmod"),
    *judged("chown chgrp", "chown"), *judged("at batch atq atrm systemd-run launchctl anacron", "scheduler"),
    *judged("kill", "kill"), *judged("find", "find", traits=frozenset({"lists-names"})),
]
