#!/bin/sh
# Builds the zkrecipes ZooKeeper image from Debian's packages and loads it with
# docker import. Usage: image.sh TAG. Needs root, debootstrap and a Docker engine.
# Run by testenv.EnsureImage (and so by `go run ./lab/cmd/zkimage`); it is not meant
# to be edited per machine: the mirror and suite can be overridden from the
# environment (ZKRECIPES_DEBIAN_MIRROR, ZKRECIPES_DEBIAN_SUITE).
set -eu
tag=$1
mirror=${ZKRECIPES_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${ZKRECIPES_DEBIAN_SUITE:-bookworm}
work=$(mktemp -d /var/tmp/zkrecipes-image.XXXXXX)
root=$work/root

cleanup() {
	umount "$root/proc" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

step() { printf 'zkimage: %s\n' "$*"; }

step "debootstrap $suite (minbase) from $mirror"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
	tail -n 30 "$work/debootstrap.log" >&2
	exit 1
}

# No service may start inside the chroot while packages are installed.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
mount -t proc proc "$root/proc"

step "installing ZooKeeper, a headless JRE and iptables"
chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C \
	apt-get install -y -q --no-install-recommends \
	openjdk-17-jre-headless libzookeeper-java iptables procps >"$work/apt.log" 2>&1 || {
	tail -n 30 "$work/apt.log" >&2
	exit 1
}
chroot "$root" apt-get clean
umount "$root/proc"
rm -rf "$root/var/lib/apt/lists/"* "$root/usr/share/doc" "$root/usr/share/man" \
	"$root/usr/share/locale" "$root/usr/sbin/policy-rc.d"
mkdir -p "$root/zk/conf" "$root/zk/data"

step "importing the root filesystem as $tag"
tar -C "$root" -c . | docker import \
	-c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	-c 'ENV LANG=C.UTF-8' \
	-c 'WORKDIR /zk' \
	-c 'CMD ["/bin/sh"]' \
	-m "zkrecipes: Debian $suite, ZooKeeper from libzookeeper-java, OpenJDK 17 headless" \
	- "$tag" >/dev/null
step "built $tag"
