#!/usr/bin/env bash
# mutation.sh replays our own mutation campaign (issue 30): each mutant in
# lab/mutation/<package>/<name>.patch is applied in a throwaway git worktree
# (never in the caller's tree), then the package's own unit and integration
# tests and its chaos workload's quick-tier scenarios run against it, and
# what caught it (failing tests, chaos scenario:checker) or MISSED is
# recorded in <out>/results.tsv and <out>/results.md.
#
# A mutant's patch starts with a comment (git apply skips it) that names the
# guarantee it breaks, quoted from the package's go doc, and may set:
#   # chaos: <scenario globs, comma-separated>   (default: the package's; "none": tests only)
#   # tests: <go test package patterns>          (default: ./<pkg>/... ./lab/integration/<pkg>/...)
#   # run: <go test -run regexp>                 (default: every test)
#
# The ensemble lock (/tmp/zkrecipes-ensemble.lock) is held for each mutant's
# tests and chaos run, not for the whole campaign; building happens outside it.
#
# Usage: scripts/mutation.sh [-p lock,rwlock] [-m glob] [-o dir] [-s seed]
#          [-r rev] [-R regexp] [-T] [-C] [-b] [-n]
#   -p  packages (directories under lab/mutation), default all
#   -m  mutant name glob, default *
#   -o  output directory, default /tmp/zkrecipes-mutation-<time>
#   -s  chaos seed, default random (recorded)
#   -r  revision the mutants apply to, default HEAD (commit new tests first)
#   -R  go test -run regexp for every mutant (overrides "# run:"), e.g. to
#       rerun one mutant against the test written for it
#   -T  no tests (chaos only)       -C  no chaos (tests only)
#   -b  also run the unmutated code (a "baseline" row per package)
#   -n  list the mutants and their guarantees, run nothing
# Exit status: 0 when every mutant was caught (and every baseline passed),
# 1 otherwise, 2 on bad usage.
set -uo pipefail

repo=$(git rev-parse --show-toplevel) || exit 2
pkgs="" glob="*" runall="" out="" seed="" rev="HEAD" tests=1 chaos=1 base=0 list=0
while getopts "p:m:o:s:r:R:TCbnh" opt; do
	case $opt in
	p) pkgs=${OPTARG//,/ } ;;
	m) glob=$OPTARG ;;
	o) out=$OPTARG ;;
	s) seed=$OPTARG ;;
	r) rev=$OPTARG ;;
	R) runall=$OPTARG ;;
	T) tests=0 ;;
	C) chaos=0 ;;
	b) base=1 ;;
	n) list=1 ;;
	*) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
done
[ -n "$pkgs" ] || pkgs=$(cd "$repo/lab/mutation" && ls -d */ | tr -d /)
rev=$(git -C "$repo" rev-parse --verify "$rev^{commit}") || exit 2 # one revision for the whole run
[ -n "$seed" ] || seed=$(( (RANDOM << 30) | (RANDOM << 15) | RANDOM ))
[ -n "$out" ] || out=/tmp/zkrecipes-mutation-$(date -u +%Y%m%dT%H%M%S)
lockfile=/tmp/zkrecipes-ensemble.lock
export PATH=$PATH:/usr/local/go/bin GOFLAGS=-tags=zkrecipes_hooks
test_timeout=${MUTATION_TEST_TIMEOUT:-8m}

# Default chaos scenarios of each package's workload(s), quick tier.
default_chaos() {
	case $1 in
	lock) echo "lock/*" ;;
	rwlock) echo "rwlock/*" ;;
	leader) echo "leader/*" ;;
	semaphore) echo "semaphore/*,semaphore-max/*" ;;
	barrier) echo "barrier/*" ;;
	queue) echo "queue/*" ;;
	group) echo "membership/*" ;;
	partition) echo "partitioner/*" ;;
	ttl) echo "none" ;; # no chaos workload: tests only
	*) echo "$1/*" ;;
	esac
}

header() { # patch key: the value of "# key:" in the patch's header
	sed -n "/^diff --git/q; s/^# $2: *//p" "$1" | head -1
}
guarantee() { # the quoted guarantee, on one line
	sed -n '/^diff --git/q; p' "$1" | awk '/^# guarantee:/{g=1} /^# [a-z-]+:/ && !/^# guarantee:/{g=0} g' |
		sed 's/^# guarantee: *//; s/^# *//' | tr '\n' ' ' | sed 's/  */ /g; s/ $//'
}

[ "$list" = 1 ] || mkdir -p "$out"
tsv=$out/results.tsv
[ "$list" = 1 ] || printf 'package\tmutant\tverdict\ttests_caught\tchaos_caught\ttest_secs\tchaos_secs\tlock_wait_secs\tseed\tguarantee\n' >"$tsv"
status=0
[ "$list" = 1 ] || echo "mutation: seed $seed, revision $(git -C "$repo" rev-parse --short "$rev"), results in $out"

# run_one PKG NAME PATCH ("" for the baseline)
run_one() {
	local pkg=$1 name=$2 patch=$3 dir log wt verdict tcaught="-" ccaught="-" tsecs=0 csecs=0 wsecs=0
	dir=$out/$pkg/$name
	mkdir -p "$dir"
	log=$dir/log.txt
	wt=$(mktemp -d /tmp/zkrecipes-mutant.XXXXXX)
	git -C "$repo" worktree add -q --detach "$wt" "$rev" >"$log" 2>&1 || { echo "worktree failed" >>"$log"; return 1; }
	local g=""
	if [ -n "$patch" ]; then
		g=$(guarantee "$patch")
		if ! git -C "$wt" apply "$patch" >>"$log" 2>&1; then
			verdict="NOT-APPLIED"
		fi
	else
		g="(unmutated code: every test and scenario must pass)"
	fi
	local pats chaossel run
	pats=$([ -n "$patch" ] && header "$patch" tests)
	[ -n "$pats" ] || pats="./$pkg/... ./lab/integration/$pkg/..."
	chaossel=$([ -n "$patch" ] && header "$patch" chaos)
	[ -n "$chaossel" ] || chaossel=$(default_chaos "$pkg")
	local dochaos=$chaos
	[ "$chaossel" != none ] || dochaos=0
	run=$([ -n "$patch" ] && header "$patch" run)
	[ -z "$runall" ] || run=$runall
	if [ -z "${verdict:-}" ]; then
		# Build outside the ensemble lock: the library, the tests (vet
		# type-checks them) and the chaos command.
		if ! (cd "$wt" && export GOWORK=$wt/go.work && go build ./... && go vet $pats &&
			go build -o "$wt/zkchaos.bin" ./lab/cmd/zkchaos) >>"$log" 2>&1; then
			verdict="BUILD-FAILED"
		fi
	fi
	if [ -z "${verdict:-}" ]; then
		local t0 t1 t2 t3
		t0=$(date +%s)
		{
			flock 9
			t1=$(date +%s)
			if [ "$tests" = 1 ]; then
				(cd "$wt" && GOWORK=$wt/go.work go test -count=1 -json -timeout "$test_timeout" ${run:+-run "$run"} $pats) \
					>"$dir/tests.json" 2>>"$log"
			fi
			t2=$(date +%s)
			if [ "$dochaos" = 1 ]; then
				(cd "$wt" && ./zkchaos.bin -tier quick -scenarios "$chaossel" -seed "$seed" -out "$dir/chaos") \
					>"$dir/chaos.txt" 2>&1
				echo "zkchaos exit $?" >>"$dir/chaos.txt"
			fi
			t3=$(date +%s)
			echo "$t0 $t1 $t2 $t3" >"$dir/times"
		} 9>"$lockfile"
		read -r t0 t1 t2 t3 <"$dir/times"
		wsecs=$((t1 - t0)) tsecs=$((t2 - t1)) csecs=$((t3 - t2))
		if [ "$tests" = 1 ] && [ -s "$dir/tests.json" ]; then
			# Failing top-level tests as <package dir>.<Test>, and packages
			# that failed without a failing test (a panic, a timeout).
			tcaught=$(jq -r --arg mod "github.com/zkrecipes/zkrecipes/" '
				select(.Action == "fail") |
				(.Package | sub("^" + $mod; "") | sub("^github.com/zkrecipes/zkrecipes$"; ".")) as $p |
				if .Test then (if (.Test | contains("/")) then empty else "\($p).\(.Test)" end)
				else "\($p):FAIL" end' "$dir/tests.json" | sort -u | paste -sd, -)
			# A package line alone only adds information when no test of it failed.
			tcaught=$(echo "$tcaught" | tr , '\n' | awk -F'[.:]' '
				/:FAIL$/ { pk[$0]=1; next } { print; seen[substr($0, 1, index($0, ".") - 1)]=1 }
				END { for (p in pk) { q=p; sub(/:FAIL$/, "", q); if (!(q in seen)) print p } }' | sort | paste -sd, -)
			[ -n "$tcaught" ] || tcaught="-"
		fi
		if [ "$dochaos" = 1 ]; then
			local sum=$dir/chaos/summary.json
			if [ -s "$sum" ]; then
				# summary.json's layout (report.SchemaVersion 2): each
				# scenario's checks, a voided check's findings not counted.
				ccaught=$(jq -r 'if .schema_version != 2 then "chaos:summary-schema-\(.schema_version)" else .scenarios[] |
					[.checks[]? | select(((.violations // []) | length > 0) and ((.voided_by // "") == "")) | .checker] as $v |
					if ($v | length) > 0 then "\(.scenario):\($v | join("+"))"
					elif (.error // "") != "" then "\(.scenario):error"
					else empty end end' "$sum" | paste -sd, -)
			else
				ccaught="chaos:no-summary($(tail -1 "$dir/chaos.txt"))"
			fi
			[ -n "$ccaught" ] || ccaught="-"
		fi
		if [ "$tcaught" = "-" ] && [ "$ccaught" = "-" ]; then
			verdict=$([ -n "$patch" ] && echo MISSED || echo PASS)
		else
			verdict=$([ -n "$patch" ] && echo CAUGHT || echo BASELINE-FAILED)
		fi
	fi
	case $verdict in CAUGHT | PASS) ;; *) status=1 ;; esac
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$pkg" "$name" "$verdict" "$tcaught" "$ccaught" \
		"$tsecs" "$csecs" "$wsecs" "$seed" "$g" >>"$tsv"
	printf '%-8s %-34s %-12s tests %4ss chaos %4ss (lock wait %ss)\n' "$pkg" "$name" "$verdict" "$tsecs" "$csecs" "$wsecs"
	git -C "$repo" worktree remove --force "$wt" >>"$log" 2>&1 || rm -rf "$wt"
	unset verdict
}

for pkg in $pkgs; do
	d=$repo/lab/mutation/$pkg
	[ -d "$d" ] || { echo "mutation: no mutants for $pkg" >&2; status=1; continue; }
	if [ "$list" = 1 ]; then
		for p in "$d"/$glob.patch; do
			[ -e "$p" ] || continue
			printf '%s/%s: %s\n  chaos: %s\n' "$pkg" "$(basename "$p" .patch)" "$(guarantee "$p")" \
				"$(header "$p" chaos || true)"
		done
		continue
	fi
	[ "$base" = 1 ] && run_one "$pkg" baseline ""
	for p in "$d"/$glob.patch; do
		[ -e "$p" ] || continue
		run_one "$pkg" "$(basename "$p" .patch)" "$p"
	done
done
[ "$list" = 1 ] && exit 0
git -C "$repo" worktree prune

# The markdown table.
{
	echo "| package | mutant | guarantee broken | caught by (tests) | caught by (chaos, scenario:checker) | verdict | tests s | chaos s |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
	tail -n +2 "$tsv" | while IFS=$'\t' read -r pkg name verdict tc cc ts cs ws sd g; do
		printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$pkg" "$name" "$g" \
			"${tc//,/, }" "${cc//,/, }" "$verdict" "$ts" "$cs"
	done
} >"$out/results.md"
echo "mutation: $(tail -n +2 "$tsv" | cut -f3 | sort | uniq -c | tr '\n' ' ')-> $out/results.md"
exit $status
