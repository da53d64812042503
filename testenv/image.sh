#!/bin/sh
# Builds a zkrecipes image from Debian's packages and loads it with docker
# import: a minimal root filesystem of one Debian suite (debootstrap minbase)
# plus the packages named, nothing pulled from a container registry.
# Usage: image.sh TAG SUITE 'PACKAGE...' ['PACKAGE=VERSION...']
#   TAG       the image's tag
#   SUITE     the Debian suite (bookworm, trixie, testing, sid)
#   PACKAGE   what apt-get installs in the root filesystem
#   PACKAGE=VERSION  what each named package's upstream version must be once
#             installed (a suite moves on: the build fails rather than tag a
#             newer ZooKeeper with an older version's name)
# Needs root, debootstrap and a Docker engine. Run by testenv.EnsureImage and
# peers' image build (and so by `go run ./lab/cmd/zkimage`); the mirror can be
# overridden from the environment (ZKRECIPES_DEBIAN_MIRROR).
set -eu
tag=$1
suite=$2
packages=$3
expect=${4:-}
mirror=${ZKRECIPES_DEBIAN_MIRROR:-http://deb.debian.org/debian}
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

step "installing $packages"
# shellcheck disable=SC2086 # the package list splits on purpose
chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C \
	apt-get install -y -q --no-install-recommends $packages >"$work/apt.log" 2>&1 || {
	tail -n 30 "$work/apt.log" >&2
	exit 1
}
versions=""
for want in $expect; do
	pkg=${want%%=*}
	ver=${want#*=}
	got=$(chroot "$root" dpkg-query -W -f '${Version}' "$pkg")
	got=${got#*:} # no epoch
	case "$got" in
	"$ver" | "$ver"-* | "$ver"+* | "$ver"~*) ;;
	*)
		echo "zkimage: $suite has $pkg $got, not $ver" >&2
		exit 1
		;;
	esac
	versions="$versions $pkg $got"
done
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
	-c "LABEL zkrecipes.suite=$suite" \
	-m "zkrecipes: Debian $suite:$versions" \
	- "$tag" >/dev/null
step "built $tag (Debian $suite:$versions)"
