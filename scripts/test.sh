#!/usr/bin/env bash
# The test command: installs what the tests need (scripts/setup.sh), then,
# over the workspace's modules (go.work: the library at the root; testenv/,
# chaos/ and lab/, whose integration, interop and bench tests run against
# real ZooKeeper ensembles; observe/zkprom and observe/zkotel):
#   1. checks formatting and vets;
#   2. (lane C, beside step 4) builds, vets and unit-tests the library
#      module alone (GOWORK=off)
#      with the oldest Go its go.mod declares (fetched from the Go module
#      proxy as golang.org/toolchain), builds testenv, chaos and lab alone
#      (GOWORK=off, through their replace directives) and tests the metric
#      adapters alone;
#   3. (lane C, after step 2) runs the downstream checks (scripts/downstream.sh: a module importing
#      only lock has zkrecipes, go-zookeeper/zk and google/uuid and nothing
#      else in its build list; scripts/downstream-testenv.sh: a service's
#      test module importing testenv and lock takes a lock on an ensemble,
#      and testenv requires only what an ensemble needs);
#   4. the race pass (lane A): every package's tests with the race
#      detector but lab/bench's, in the workspace (./... is the root module
#      only, so ./chaos/..., ./testenv/... and ./lab/... are named too).
#      chaos's scenario tests skip themselves under -race (skipUnderRace
#      in chaos/race_test.go); its TestRunnerRace covers the chaos
#      engine's concurrency there;
#   5. lane B, after lane A (beside it with ZKRECIPES_TEST_LANES=2), without
#      the race detector: chaos's TestEndToEnd (every workload, every fault
#      kind, the broken workloads and two mutants) in two processes side by
#      side (ZKCHAOS_SHARD=1/2 and 2/2), TestExternalServers (see lane_b
#      below); and lab/bench, without the race detector, in lane C after
#      steps 2 and 3.
# With -full (first argument), then also (the full tier):
#   6. every lease boundary test again with 2 trials per case (the
#      default runs 1: ZKRECIPES_LEASE_TRIALS=2), the freeze terms' at an
#      8 s timeout among them (ZKRECIPES_LEASE_FREEZE=1:
#      TestLeaseFreezeTermInside's long cases and TestLeaseFreezeTermOutside,
#      a few minutes); lab/interop against the older peer release (Curator
#      5.4, kazoo 2.8 of Debian 12; the default runs the newer one only);
#      testenv on both of its backends (containers and local JVMs;
#      the default tier tests the one it picks, containers where Docker
#      answers) with -race, and lab/bench/scale (the scale series at their
#      smallest sizes) without it;
#   7. the secured pass: the integration packages (all but security and
#      inspect) again with ZKRECIPES_SECURE=1 and -race (TLS, enforced
#      digest authentication, DefaultAuthACL on every recipe node);
#   8. chaos's TestSecuredQuickTier, every mutant on seeds 1, 2
#      and 3 (TestMutants) and TestReportInBrowser (a failing mutant's
#      and a passing run's reports in headless Chromium), without -race;
#   9. the whole quick tier of the chaos suite (go run ./lab/cmd/zkchaos,
#      107 scenarios; report in report/).
# No test runs twice: a failure fails the run. Extra arguments go to every
# go test of steps 4 to 8 (for example -run TestName or -short). At the end
# it prints the time of each step and a table of every package's time.
set -euo pipefail
cd "$(dirname "$0")/.."
full=false
if [ "${1:-}" = -full ]; then
	full=true
	shift
fi
extra=("$@")
began=$SECONDS

logdir=$(mktemp -d)
steps=() # "secs name" of each step, in order
# step NAME CMD...: runs CMD and records its time.
step() {
	local name=$1 t0=$SECONDS
	shift
	"$@"
	steps+=("$((SECONDS - t0)) $name")
}
# gotest LOG GO-TEST-ARGS...: go test, its output to the terminal and to
# $logdir/LOG.log, which the package table reads.
gotest() {
	local log=$logdir/$1.log
	shift
	go test "$@" 2>&1 | tee "$log"
	return "${PIPESTATUS[0]}"
}
# table prints the time of each step and of each package (the "ok" and
# "FAIL" lines of every go test), slowest first.
table() {
	local rc=$?
	echo
	echo "test.sh: steps (s)"
	local s
	for s in "${steps[@]}"; do printf '  %6s  %s\n' "${s%% *}" "${s#* }"; done
	echo "test.sh: packages (s), slowest first"
	awk '
		FNR == 1 { pass = FILENAME; sub(/.*\//, "", pass); sub(/\.log$/, "", pass) }
		/^(ok|FAIL)[ \t]+[^ \t]+[ \t]+[0-9.]+s/ {
			secs = $3; sub(/s$/, "", secs)
			printf "%8.1f  %-4s  %-10s  %s\n", secs, $1, pass, $2
		}' "$logdir"/*.log 2>/dev/null | sort -rn || true
	if [ "$rc" != 0 ]; then
		# What failed, on the last screen (a CI that keeps only the tail of
		# the output still shows it): failed tests, panics, races, and the
		# chaos runner's FAIL and not-exercised scenario lines with the
		# errors the chaos tests report (they begin with "FAIL ").
		echo "test.sh: what failed (first 60 lines)"
		grep -h -E -e '^[[:space:]]*--- FAIL' -e '^FAIL[[:space:]]' -e '^panic: ' -e 'WARNING: DATA RACE' \
			-e '\] (FAIL|NOT EXERCISED|ERROR) ' -e '_test\.go:[0-9]+: (FAIL|NOT EXERCISED) ' "$logdir"/*.log 2>/dev/null |
			cut -c1-300 | head -60 || true
		# a race report names its goroutines only in the lines after its
		# warning: the first two reports in full (up to 60 lines each)
		awk '/WARNING: DATA RACE/ { if (++n > 2) exit; on = 1; k = 0 }
			on { print; if (++k >= 60 || /^==================$/ && k > 1) on = 0 }' "$logdir"/*.log 2>/dev/null |
			cut -c1-300 || true
	fi
	echo "test.sh: $( [ "$rc" = 0 ] && echo passed || echo FAILED ) in $((SECONDS - began)) s"
	# a step failed before lane B was waited for: let it end (it holds
	# ensembles) before its logs go
	[ -n "${lane_b_pid:-}" ] && wait "$lane_b_pid" 2>/dev/null
	[ -n "${lane_c_pid:-}" ] && wait "$lane_c_pid" 2>/dev/null
	rm -rf "$logdir"
}
trap table EXIT

step setup bash scripts/setup.sh
command -v go >/dev/null 2>&1 || export PATH=$PATH:/usr/local/go/bin
export GOWORK="$PWD/go.work"

unset ZKRECIPES_SECURE # the default passes are plain whatever the caller set

# Every go command builds the recipes' test hooks in (internal/hooks: a
# production build has none, and the tests that need one skip themselves
# without the tag), but the production-build checks below, which set
# GOFLAGS to -trimpath alone.
#
# -trimpath (everywhere, and in scripts/downstream*.sh): without it the Go build cache
# keys every package of ours by the checkout's directory, so a clean
# clone at a new path compiles everything again (measured on 2 cores:
# 940, 958 and 921 s per clean clone without it, 814 to 853 s with it);
# with it, a clean clone reuses what any earlier run on the machine
# compiled. No test reads its own source path (runtime.Caller).
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath -tags=zkrecipes_hooks"

# Lane B (after lane A; its output is shown when it ends): the chaos
# slice, without -race.
#   - the chaos slice: chaos's TestEndToEnd (every workload, every
#     fault kind, the broken workloads and two mutants; in two halves, two
#     processes side by side; with a headless browser installed, it loads
#     its reports in it), TestExternalServers and TestKilledRunLeavesArtifacts
#     (a run killed with SIGKILL leaves valid artifacts). Their clients reconnect hundreds of times with
#     watches set, where go-zookeeper v1.0.4 races on its own lastZxid
#     (PR #35 upstream, unfixed): under -race that failed about half the
#     runs (the Session's tap removes the race since, internal/tap/gate.go;
#     these tests stay without -race for time);
# Lane C (beside lane A, from its start; its output is shown when lane A
# ends): the modules alone and the downstream checks (step 2 and 3 above),
# then lab/bench without -race: its series (and lab/bench/scale's, in the
# full tier) run against time budgets, which the race detector's slowdown
# on a loaded machine exhausted (the code they measure is the library's,
# raced in the integration tests); what they assert, requests per
# operation counted on the wire, does not depend on the load.
lane_b_pkgs="github.com/zkrecipes/zkrecipes/lab/bench github.com/zkrecipes/zkrecipes/lab/bench/scale"
lane_b() {
	local rc=0 t0 half1_pid
	t0=$SECONDS
	# Two processes side by side, two ensembles at once: the chaos slice's
	# first half (ZKCHAOS_SHARD=1/2: every other quick scenario),
	# TestExternalServers and TestKilledRunLeavesArtifacts; and its second
	# half with the broken workloads and the mutants (ZKCHAOS_SHARD=2/2).
	(
		ZKCHAOS_SHARD=1/2 go test -count=1 -timeout 30m -run '^(TestEndToEnd|TestExternalServers|TestKilledRunLeavesArtifacts)$' "${extra[@]}" ./chaos >"$logdir/chaos1.log" 2>&1
		echo "$?" >"$logdir/chaos1.rc"
		echo "$((SECONDS - t0)) chaos slice 1/2, TestExternalServers (lane B, no -race)" >"$logdir/half1.steps"
	) &
	half1_pid=$!
	ZKCHAOS_SHARD=2/2 go test -count=1 -timeout 30m -run '^TestEndToEnd$' "${extra[@]}" ./chaos >"$logdir/chaos2.log" 2>&1 || rc=1
	echo "$((SECONDS - t0)) chaos slice 2/2, broken workloads, mutants (lane B, no -race)" >"$logdir/laneb.steps"
	wait "$half1_pid" || true
	[ "$(cat "$logdir/chaos1.rc" 2>/dev/null)" = 0 ] || rc=1
	cat "$logdir/half1.steps" >>"$logdir/laneb.steps" 2>/dev/null || true
	return $rc
}
echo "test.sh: lane B (after lane A unless ZKRECIPES_TEST_LANES=2): the chaos slice (TestEndToEnd, TestExternalServers, TestKilledRunLeavesArtifacts), without -race"
# By default lane B runs after lane A (and lane C). ZKRECIPES_TEST_LANES=2
# runs it beside lane A, in the background: up to five processes with
# ensembles at once; on this 2-core machine such load (then four) made
# timing-bound tests miss their deadlines in both clean-clone runs that
# tried it (see docs/testing.md).
if [ "${ZKRECIPES_TEST_LANES:-1}" = 2 ]; then
	lane_b &
	lane_b_pid=$!
fi

# The library's oldest Go: a release of the go directive's version. Raise
# both together.
oldest=go1.22.12
libgo=$(sed -n 's/^go //p' go.mod)
case "$oldest" in
"go$libgo".*) ;;
*)
	echo "test.sh: oldest toolchain $oldest is not a release of go.mod's go $libgo"
	exit 1
	;;
esac

lint() {
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
	if [ -n "$unformatted" ]; then
		printf 'gofmt would change:\n%s\n' "$unformatted"
		return 1
	fi
	go vet ./... ./chaos/... ./testenv/... ./lab/...
	GOFLAGS=-trimpath go vet ./... # the library's production build (the tag changes only its files)
}
step "gofmt, go vet" lint

alone() {
	echo "test.sh: the library module alone, with $oldest"
	GOFLAGS=-trimpath GOWORK=off GOTOOLCHAIN=$oldest go build ./...
	GOFLAGS=-trimpath GOWORK=off GOTOOLCHAIN=$oldest go vet ./...
	GOFLAGS=-trimpath GOWORK=off GOTOOLCHAIN=$oldest go test -count=1 ./... | tee "$logdir/oldest-go.log"
	echo "test.sh: the testenv, chaos and lab modules alone"
	local m
	for m in testenv chaos lab; do
		(cd "$m" && GOWORK=off go build ./...)
	done
	# The metric adapters (observe/zkprom, observe/zkotel): modules of their
	# own; their tests against real ensembles are in lab/integration/observe.
	echo "test.sh: the metric adapters alone"
	for m in observe/zkprom observe/zkotel; do
		(cd "$m" && GOWORK=off go vet ./... && GOWORK=off go test -race -count=1 ./...) | tee -a "$logdir/adapters.log"
	done
	bash scripts/downstream.sh
	bash scripts/downstream-testenv.sh
}
lane_c() {
	local rc=0 t0=$SECONDS
	# alone in a job of its own: inside an || list errexit would be off
	# and a failing command in its middle would go unnoticed
	(alone) >"$logdir/alone.out" 2>&1 &
	wait "$!" || rc=1
	echo "$((SECONDS - t0)) modules alone, downstream (lane C, beside lane A)" >"$logdir/lanec.steps"
	go test -count=1 -timeout 30m "${extra[@]}" ./lab/bench >"$logdir/bench.log" 2>&1 || rc=1
	echo "$((SECONDS - t0)) then lab/bench (lane C, no -race)" >>"$logdir/lanec.steps"
	return $rc
}
echo "test.sh: lane C, beside the race pass: the modules alone, the downstream checks, then lab/bench (no -race)"
lane_c &
lane_c_pid=$!

# Lane A, the race pass: every other package with -race, two at a time
# (go test -p 2; three at a time saturated both cores, and the lease
# boundary tests' cuts, aimed within a ping period, missed: see
# docs/testing.md), the slowest first (times of a run on this machine) so
# that no long package runs alone at the end, but lab/integration/recipes,
# whose lease boundary tests measure timing, fourth: it starts once lane
# C is over. chaos's scenario tests skip themselves under
# -race (skipUnderRace in chaos/race_test.go); its TestRunnerRace
# covers the chaos engine's concurrency.
slowest="lab/interop testenv chaos lab/integration/recipes lab/integration/queue lab/integration/leader
lab/integration/cache lab/integration/group lab/integration/persistent lab/integration/lock lab/integration/partition
lab/integration/discovery lab/integration/rwlock chaos/faults lab/integration/barrier lab/integration/twophase"
all=$(go list ./... ./chaos/... ./testenv/... ./lab/...)
race_pkgs=$(
	for p in $slowest; do echo "github.com/zkrecipes/zkrecipes/$p"; done
	echo "$all"
)
race_pkgs=$(echo "$race_pkgs" | awk '!seen[$0]++' | grep -v -x -F -f <(tr ' ' '\n' <<<"$lane_b_pkgs"))
t0=$SECONDS
race_rc=0
echo "test.sh: race pass (lane A: go test -race over ./... ./chaos/... ./testenv/... ./lab/... but lane B's packages)"
# lab/interop runs against the newer peer release (Curator 5.7.1 and kazoo
# 2.11 of Debian testing, what services run) unless the caller set
# ZKRECIPES_PEERS; the full tier adds the older one (Curator 5.4, kazoo
# 2.8 of Debian 12). Every package against ZooKeeper 3.8.0
# (testenv's default image; the newer servers' images take minutes to
# build on a fresh machine: zkmatrix and the nightly run them).
# ZKRECIPES_TEST_P sets how many packages the race pass runs at once (go
# test -p, each package with its own ensemble); 2 by default.
race_p=(-p "${ZKRECIPES_TEST_P:-2}")
ZKRECIPES_PEERS=${ZKRECIPES_PEERS:-testing} gotest race -race "${race_p[@]}" -count=1 -timeout 40m "${extra[@]}" $race_pkgs || race_rc=$?
steps+=("$((SECONDS - t0)) race pass (lane A)")
lane_c_rc=0
wait "$lane_c_pid" || lane_c_rc=$?
lane_c_pid=
echo "test.sh: lane C's output:"
cat "$logdir/alone.out" "$logdir/bench.log" 2>/dev/null || true
while read -r l; do steps+=("$l"); done <"$logdir/lanec.steps" || true
lane_b_rc=0
if [ -n "${lane_b_pid:-}" ]; then
	wait "$lane_b_pid" || lane_b_rc=$?
else
	lane_b || lane_b_rc=$?
fi
echo "test.sh: lane B's output:"
cat "$logdir/chaos1.log" "$logdir/chaos2.log" 2>/dev/null || true
while read -r l; do steps+=("$l"); done <"$logdir/laneb.steps" || true
if [ "$race_rc" != 0 ] || [ "$lane_b_rc" != 0 ] || [ "$lane_c_rc" != 0 ]; then
	echo "test.sh: race pass exit $race_rc, lane B exit $lane_b_rc, lane C exit $lane_c_rc"
	exit 1
fi

if ! $full; then
	exit 0
fi

echo "test.sh: every lease boundary test with 2 trials per case, the freeze terms' at an 8 s timeout among them (-race)"
step "lease terms, 2 trials" env ZKRECIPES_LEASE_FREEZE=1 ZKRECIPES_LEASE_TRIALS=2 bash -c 'go test -race -count=1 -timeout 40m -run "^TestLease" "$@" ./lab/integration/recipes 2>&1 | tee "'"$logdir"'/lease-terms.log"; exit "${PIPESTATUS[0]}"' _ "${extra[@]}"

echo "test.sh: lab/interop against the older peer release (Debian 12: Curator 5.4, kazoo 2.8; -race)"
step "interop, older peers" env ZKRECIPES_PEERS=debian12 bash -c 'go test -race -count=1 -timeout 30m "$@" ./lab/interop 2>&1 | tee "'"$logdir"'/interop-debian12.log"; exit "${PIPESTATUS[0]}"' _ "${extra[@]}"

echo "test.sh: testenv on both backends (-race), lab/bench/scale (no -race)"
step "testenv both backends" env ZKRECIPES_TESTENV_BACKENDS=all bash -c 'go test -race -count=1 -timeout 30m "$@" ./testenv 2>&1 | tee "'"$logdir"'/testenv-all.log"; exit "${PIPESTATUS[0]}"' _ "${extra[@]}"
step "lab/bench/scale" gotest scale -count=1 -timeout 30m "${extra[@]}" ./lab/bench/scale

# The secured pass: the integration packages again, with every ensemble
# of lab/internal/testutil TLS-only with enforced digest authentication
# and every session of the harness over TLS as testutil.User (see
# lab/internal/testutil/secure.go). lab/integration/security is left out:
# it starts its own ensembles and principals (anonymous, other digest
# users) to test exactly that, in the race pass. lab/integration/inspect
# is left out too: its tests run Curator and kazoo peers beside our
# clients, which the harness does not set up for TLS and digest; its
# TestCommandOnSecuredEnsemble starts a secured ensemble of its own and
# runs the command with -tls-ca and -digest in the race pass.
secured=$(go list ./lab/integration/... | grep -v -e '/lab/integration/security' -e '/lab/integration/inspect$')
echo "test.sh: secured pass (ZKRECIPES_SECURE=1)"
step "secured pass" env ZKRECIPES_SECURE=1 bash -c 'go test -race -count=1 -timeout 40m "$@" 2>&1 | tee "'"$logdir"'/secured.log"; exit "${PIPESTATUS[0]}"' _ "${extra[@]}" $secured

echo "test.sh: the secured quick tier and every mutant on seeds 1, 2, 3, the report in a browser (no -race)"
step "secured chaos, mutants" env ZKCHAOS_MUTANTS=all ZKCHAOS_MUTANT_SEEDS=1,2,3 bash -c 'go test -count=1 -timeout 60m -run "^(TestSecuredQuickTier|TestMutants|TestReportInBrowser)$" "$@" ./chaos 2>&1 | tee "'"$logdir"'/chaos-full.log"; exit "${PIPESTATUS[0]}"' _ "${extra[@]}"

echo "test.sh: the whole quick tier (go run ./lab/cmd/zkchaos)"
step "zkchaos quick tier" go run ./lab/cmd/zkchaos
