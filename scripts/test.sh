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
go test -race -count=1 -timeout 40m "$@" ./...
