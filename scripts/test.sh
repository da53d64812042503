#!/usr/bin/env bash
# The test command: installs what the tests need (scripts/setup.sh), then
# checks formatting, vets, and runs every package's tests with the race
# detector against real ZooKeeper ensembles. Extra arguments go to go test
# (for example -run TestName or -short).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
command -v go >/dev/null 2>&1 || export PATH=$PATH:/usr/local/go/bin

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	printf 'gofmt would change:\n%s\n' "$unformatted"
	exit 1
fi
go vet ./...
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if go test -race -count=1 -timeout 40m "$@" ./... 2>&1 | tee "$log"; [ "${PIPESTATUS[0]}" = 0 ]; then
	exit 0
fi
# go-zookeeper v1.0.4 (pinned) races on its own lastZxid when a session
# reconnects with watches set (sendSetWatches reads it while recvLoop writes
# it), and the race detector fails whichever test was running. Only when the
# run saw that race are the failed packages run once more; any other failure
# stands, and a package that fails again fails the run.
if grep -q 'zk.(\*Conn).sendSetWatches' "$log"; then
	failed=$(awk '$1 == "FAIL" && $2 ~ /^github.com\// {print $2}' "$log" | sort -u)
	if [ -n "$failed" ]; then
		echo "test.sh: go-zookeeper's own lastZxid race was seen; running $(echo $failed) once more"
		exec go test -race -count=1 -timeout 20m "$@" $failed
	fi
fi
exit 1
