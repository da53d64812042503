#!/usr/bin/env bash
# The main job: installs what is missing (scripts/setup.sh), then runs the
# chaos suite (lab/cmd/zkchaos, quick tier by default) against a
# containerised 3-server ZooKeeper ensemble behind Toxiproxy. It prints a
# line per scenario and a summary table, writes report/ (index.html,
# summary.json, junit.xml, histories) and exits non-zero on any violation (1) or scenario not exercised (3).
# Extra arguments go to lab/cmd/zkchaos (for example -tier full, -seed N).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
command -v go >/dev/null 2>&1 || export PATH=$PATH:/usr/local/go/bin
export GOWORK="$PWD/go.work"
go run -tags zkrecipes_hooks ./lab/cmd/zkchaos "$@" # the tag: test hooks, for the cache mutant
