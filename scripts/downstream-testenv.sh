#!/usr/bin/env bash
# The testenv downstream check (issue 33): what a service's test module
# pays for importing the test fixture (github.com/zkrecipes/zkrecipes/testenv)
# and the lock package. In a temporary directory it makes a fresh module
# with one test that imports both (built against this checkout by replace
# directives), runs go mod tidy and go vet, prints the module graph, the
# modules whose packages the test compiles and why Prometheus and
# OpenTelemetry are among them, and fails unless testenv's own direct
# requirements are exactly what an ensemble needs and the graph holds no
# porcupine, chaos or lab module.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v go >/dev/null 2>&1 || export PATH=$PATH:/usr/local/go/bin
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
export GOWORK=off GOFLAGS='-mod=mod -trimpath' GOTOOLCHAIN=local
gover=$(sed -n 's/^go //p' "$root/testenv/go.mod")
cat >go.mod <<EOM
module example.com/service

go $gover

require (
	github.com/zkrecipes/zkrecipes v0.0.0-00010101000000-000000000000
	github.com/zkrecipes/zkrecipes/testenv v0.0.0-00010101000000-000000000000
)

replace (
	github.com/zkrecipes/zkrecipes => $root
	github.com/zkrecipes/zkrecipes/testenv => $root/testenv
)
EOM
cat >service_test.go <<'EOM'
package service

import (
	"context"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/lock"
	"github.com/zkrecipes/zkrecipes/recipes"
	"github.com/zkrecipes/zkrecipes/testenv"
)

// A service's own test: one call starts an ensemble, stopped on cleanup;
// a lock taken and given back on it.
func TestLockOnEnsemble(t *testing.T) {
	e := testenv.New(t, testenv.Config{Servers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := recipes.Connect(ctx, e.DirectAddrs(), recipes.WithSessionTimeout(4*time.Second),
		recipes.WithEnsembleTiming(e.Timing()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, err := lock.New(s, "/service/lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
EOM
go mod tidy
go vet ./...
go test -count=1 ./...
echo "downstream-testenv: go list -m all of a test module importing testenv and lock:"
go list -m all | sed 's/^/  /'
# What is compiled into the test: Toxiproxy's server brings Prometheus'
# client and the Docker client (testcontainers-go) OpenTelemetry; neither
# is testenv's own requirement.
echo "downstream-testenv: modules of the packages compiled into the test:"
go list -deps -test -f '{{with .Module}}{{.Path}}{{end}}' ./... | sort -u | sed '/^$/d' | sed 's/^/  /'
for m in github.com/prometheus/client_golang go.opentelemetry.io/otel; do
	echo "downstream-testenv: why $m:"
	go mod why -m "$m" | sed 1d | sed 's/^/  /'
done
# testenv's own direct requirements: only what an ensemble needs.
direct=$(GOWORK=off go -C "$root/testenv" list -m -f '{{if and (not .Main) (not .Indirect)}}{{.Path}}{{end}}' all | sed '/^$/d' | sort | tr '\n' ' ')
want="github.com/Shopify/toxiproxy/v2 github.com/go-zookeeper/zk github.com/google/uuid github.com/moby/moby/api github.com/moby/moby/client github.com/rs/zerolog github.com/testcontainers/testcontainers-go "
if [ "$direct" != "$want" ]; then
	printf 'downstream-testenv: testenv requires directly: %s\ndownstream-testenv: want exactly: %s\n' "$direct" "$want"
	exit 1
fi
bad=$(go list -m all | awk '{print $1}' | grep -E -e 'porcupine' -e '^github.com/zkrecipes/zkrecipes/(chaos|lab)$' || true)
if [ -n "$bad" ]; then
	printf 'downstream-testenv: modules the fixture does not need:\n%s\n' "$bad"
	exit 1
fi
echo "downstream-testenv: ok: testenv requires $(echo $direct | wc -w) modules directly; $(go list -m all | sed 1d | wc -l) in the test module's graph, none of porcupine, chaos or lab"
