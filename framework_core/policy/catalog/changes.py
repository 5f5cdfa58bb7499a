"""Programs that change the system: those whose name alone decides (privilege, disks, power, the kernel), and
those judged by what their targets mean (`policy/programs.py`: deleting, writing, modes and owners,
scheduling, containers; rsync's network use is its `host:path` operands, in `policy/network.py`). One
entry per program; the judges are code because a target's meaning is.
"""

from __future__ import annotations

from framework_core.policy.catalog.entry import EXACT, Entry, fixed, judged, traits

PRIVILEGE = "privilege escalation"
DISK = "formats, repartitions or maps a disk"
PROGRAMS: list[Entry] = [
    *fixed("sudo doas", "dangerous", PRIVILEGE, traits=EXACT | {"runs-as-another"}),
    *fixed("su", "dangerous", PRIVILEGE, traits=EXACT),
    *fixed("pkexec run0", "dangerous", PRIVILEGE, traits=frozenset({"runs-as-another"})),
    *fixed("runas sudoedit calife ksu", "dangerous", PRIVILEGE),
    *fixed("mkfs wipefs fdisk parted", "dangerous", DISK, traits=EXACT),
    *fixed("mke2fs mkswap sfdisk cfdisk sgdisk gdisk blkdiscard mkdosfs mkntfs cryptsetup zpool diskutil hdparm "
           "badblocks losetup dmsetup", "dangerous", DISK),
    *fixed("shutdown reboot halt poweroff kexec", "dangerous", "shuts down or reboots the machine"),
    *fixed("insmod modprobe rmmod nsenter setcap pivot_root switch_root", "dangerous",
           "{name} changes the kernel, capabilities or namespaces of the host"),
    *fixed("chattr mount umount swapon swapoff chroot unshare setfacl useradd usermod userdel passwd chpasswd "
           "groupadd visudo iptables nft ufw ip6tables", "ask", "{name} changes the system"),
    *[p for n in ("rm", "rmdir", "unlink", "truncate") for p in judged(n, n, traits=EXACT)],
    *[p for n in ("touch", "mkdir", "mkfifo") for p in judged(n, n)],
    *judged("mv ln install", "copy", traits=EXACT), *judged("cp rsync", "copy", traits=EXACT | {"reads-trees"}),
    *judged("tee", "tee", traits=EXACT), *judged("dd", "dd", traits=EXACT), *judged("shred", "shred", traits=EXACT),
    *judged("chmod", "chmod", traits=EXACT), *judged("chown chgrp", "chown", traits=EXACT),
    *judged("at launchctl", "scheduler", traits=EXACT), *judged("batch atq atrm systemd-run anacron", "scheduler"),
    *judged("kill", "kill", traits=EXACT), *judged("find", "find", traits=EXACT | {"lists-names"}),
    *traits("pkill killall dropdb redis-cli git-filter-repo", "exact-grants"),
]
