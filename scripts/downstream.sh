#!/usr/bin/env bash
# The downstream check (issue 16): what a service that imports only
# github.com/zkrecipes/zkrecipes/lock pays. In a temporary directory it makes
# a fresh module whose one import is lock (built against this checkout by a
# replace directive, with the library's declared oldest Go as its go
# directive), runs go mod tidy and go build, prints the module list, and
# fails unless that list is the module itself plus exactly three:
# github.com/zkrecipes/zkrecipes, github.com/go-zookeeper/zk and
# github.com/google/uuid, and unless its go directive is still the one it
# was made with (the library forced none higher on it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v go >/dev/null 2>&1 || export PATH=$PATH:/usr/local/go/bin
libgo=$(sed -n 's/^go //p' "$root/go.mod")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
export GOWORK=off GOFLAGS='-mod=mod -trimpath' GOTOOLCHAIN=local
cat >go.mod <<EOF
module example.com/downstream

go $libgo

require github.com/zkrecipes/zkrecipes v0.0.0-00010101000000-000000000000

replace github.com/zkrecipes/zkrecipes => $root
EOF
cat >main.go <<'EOF'
// Command downstream is a service whose only import is the lock package.
package main

import "github.com/zkrecipes/zkrecipes/lock"

var _ *lock.Mutex

func main() {}
EOF
go mod tidy
go build ./...
echo "downstream: go list -m all of a module importing only lock:"
go list -m all | sed 's/^/  /'
got=$(go list -m -f '{{if not .Main}}{{.Path}}{{end}}' all | sed '/^$/d' | sort | tr '\n' ' ')
want="github.com/go-zookeeper/zk github.com/google/uuid github.com/zkrecipes/zkrecipes "
if [ "$got" != "$want" ]; then
	printf 'downstream: modules besides itself: %s\ndownstream: want exactly: %s\n' "$got" "$want"
	exit 1
fi
if ! grep -qx "go $libgo" go.mod; then
	printf 'downstream: its go directive changed from go %s:\n' "$libgo"
	cat go.mod
	exit 1
fi
echo "downstream: ok: 3 modules besides itself, go $libgo kept"
