#!/usr/bin/env bash
# Installs what zkrecipes' tests and tools need, when it is missing, and does
# nothing else: safe to run any number of times. Needs root for the installs.
#   - Go on PATH (the toolchain itself is not installed here)
#   - Debian packages: a JDK and libzookeeper-java (process backend),
#     libcurator-recipes-java, libcurator-discovery-java and python3-kazoo
#     (interop peers),
#     debootstrap (image build), docker.io when no docker client exists
#   - a headless browser for the chaos report's checks (TestReportInBrowser,
#     TestEndToEnd): Debian's chromium-headless-shell when no chromium or
#     google-chrome is on PATH; best effort (Ubuntu has no such package,
#     and its CI runners have google-chrome)
#   - a running Docker engine (dockerd is started when none answers)
#   - the ZooKeeper image zkrecipes/zookeeper:3.8-debian and the newer peer
#     release's image zkrecipes/peers:curator-5.7.1-kazoo-2.11.0 (Curator
#     5.7.1 and kazoo 2.11.0 from Debian testing, which lab/interop runs
#     beside Debian 12's), each built once; the other ZooKeeper releases'
#     images are built when a run asks for them, or by
#     go run ./lab/cmd/zkimage -all)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'setup: %s\n' "$*"; }

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=$PATH:/usr/local/go/bin
fi
command -v go >/dev/null 2>&1 || { log "Go is not installed (need Go 1.26)"; exit 1; }

need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
[ -f /usr/share/java/zookeeper.jar ] || need+=(libzookeeper-java)
[ -f /usr/share/java/curator-recipes.jar ] || need+=(libcurator-recipes-java)
[ -f /usr/share/java/curator-x-discovery.jar ] || need+=(libcurator-discovery-java)
[ -d /usr/lib/python3/dist-packages/kazoo ] || need+=(python3-kazoo)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
command -v docker >/dev/null 2>&1 || need+=(docker.io)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		log "missing ${need[*]}; run as root or: sudo apt-get install ${need[*]}"
		exit 1
	fi
	log "installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

browser=
for b in chromium-headless-shell chromium google-chrome; do
	command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
if [ -z "$browser" ]; then
	install_browser() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium-headless-shell >/dev/null 2>&1; }
	if [ "$(id -u)" = 0 ] && { install_browser || { apt-get update -q >/dev/null 2>&1 && install_browser; }; }; then
		log "installed chromium-headless-shell"
	else
		log "no headless browser (apt-get install chromium-headless-shell): the chaos report's browser checks will be skipped"
	fi
fi

if ! docker version >/dev/null 2>&1; then
	log "no Docker engine answers; starting dockerd"
	(dockerd >/var/log/zkrecipes-dockerd.log 2>&1 &)
	for _ in $(seq 1 120); do
		docker version >/dev/null 2>&1 && break
		sleep 0.5
	done
	docker version >/dev/null 2>&1 || { log "dockerd did not start; see /var/log/zkrecipes-dockerd.log"; exit 1; }
fi

GOWORK="$PWD/go.work" go run ./lab/cmd/zkimage -peers
