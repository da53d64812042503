#!/usr/bin/env bash
# The main job: installs what is missing (scripts/setup.sh), then starts a
# containerised 3-server ZooKeeper ensemble behind Toxiproxy, prints each
# server's mode and the connect string, and tears it down. (The chaos suite
# will take this place.) Extra arguments go to cmd/zkensemble.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
command -v go >/dev/null 2>&1 || export PATH=$PATH:/usr/local/go/bin
go run ./cmd/zkensemble "$@"
