#!/bin/busybox sh
# rxevm stage 1: runs as /init from the initramfs (busybox only). Loads the
# modules, builds the guest root (host / read-only over 9p + tmpfs overlay),
# mounts the shared temp dir and the control dir, then chroots into the root
# and execs the rxevm guest agent, which does the rest.
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

fail() {
	echo "rxevm-init: $*" >/dev/console
	[ -d /ctl/. ] && echo "$*" >/ctl/boot-error
	poweroff -f
	sleep 5
}

for m in $(cat /modules.order); do
	insmod "/lib/modules/$m" || fail "insmod $m failed"
done

o=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $o rxevmctl /ctl || fail "mount control dir"
for set in $(cat /ctl/modules); do
	for m in $(cat "/modules-$set.order"); do
		insmod "/lib/modules/$m" || fail "insmod $m failed"
	done
done
mount -t 9p -o $o,ro hostroot /host || fail "mount host root"
mount -t tmpfs -o mode=0755 tmpfs /upper || fail "mount tmpfs"
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/host,upperdir=/upper/u,workdir=/upper/w /newroot || fail "mount overlay"
tmp=$(cat /ctl/tmpdir)
mount -t 9p -o $o,cache=mmap hosttmp "/newroot$tmp" || fail "mount $tmp"
mount -t tmpfs -o mode=0755 tmpfs /newroot/run || fail "mount /run"
mkdir -p /newroot/run/rxevm
mount --move /ctl /newroot/run/rxevm || fail "move control dir"
for d in proc sys dev; do
	mount --move /$d /newroot/$d || fail "move /$d"
done
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
ln -sf /proc/self/fd /newroot/dev/fd
ln -sf /proc/self/fd/0 /newroot/dev/stdin
ln -sf /proc/self/fd/1 /newroot/dev/stdout
ln -sf /proc/self/fd/2 /newroot/dev/stderr
agent=$(cat /newroot/run/rxevm/agent)
exec chroot /newroot "$agent" --rxevm-guest-agent /run/rxevm
fail "exec $agent failed"
