// Command zkchaos runs the chaos suite: it prepares the ZooKeeper image,
// starts a 3-server ensemble in containers behind Toxiproxy, plays every
// scenario (workload x fault) on a seeded schedule, proves the invariants
// with the chaos checkers, prints a line per scenario (at most 120
// columns, with the time elapsed and an estimate of what is left) and a
// summary table, writes the report after every scenario (index.html,
// scenarios/*.html, junit.xml, summary.json, history/*.json.gz), prints a
// replay command per failing scenario and a last line that begins with
// PASS, NOT EXERCISED or FAIL and names the failing scenarios, and exits
// 1 on any violation or error, 3 when nothing failed but a scenario was
// not exercised (a fault that left no trace, clients not placed as asked:
// it tested nothing, so it is no pass), 2 when the run could not start.
//
//	go run ./lab/cmd/zkchaos [-tier quick|full] [-scenarios 'register/*,lock/kill-*']
//	                     [-workloads lock,leader] [-duration 12s] [-seed N] [-out report] [-list] [-broken]
//	                     [-secure] [-servers host:port,... [-root /path] [-digest user:password] [-tls-ca ca.pem]]
//	go run ./lab/cmd/zkchaos -mutant-seeds 5 [-workloads counter-blind-mutant,...] [-seed N]
//
// The seed and the run's replay command are printed; the same seed replays
// the same fault schedules. A replay command repeats the flags given (less
// -seed, -scenarios, -out, -list, -v) with -tier, the seed and the
// scenarios; a -digest password shows as [REDACTED].
//
// -mutant-seeds N runs every mutant workload (or those -workloads names)
// under its exposing faults on N seeds (the first -seed when given, the
// others random), all on one ensemble, prints a verdict per mutant scenario
// and seed, and exits 1 unless every mutant was caught, by one of the
// checkers that must catch it, on every seed.
//
// -secure starts the ensemble with a TLS-only client port and enforced
// digest authentication, and every session speaks TLS and authenticates.
// -servers runs against servers zkchaos did not start: client faults
// through proxies in front of them, server faults reported not
// applicable, every node under -root deleted at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/zkrecipes/zkrecipes/chaos"
	"github.com/zkrecipes/zkrecipes/chaos/faults"
	"github.com/zkrecipes/zkrecipes/chaos/report"
	"github.com/zkrecipes/zkrecipes/chaos/workloads"
	"github.com/zkrecipes/zkrecipes/testenv"
)

func main() {
	workloads.RunWorkerIfAsked() // zkchaos re-executes itself for clients in worker processes
	os.Exit(run())
}

func run() int {
	tier := flag.String("tier", "quick", "quick (every fault once per scenario) or full (faults repeated over -duration, plus mixed scenarios)")
	scenarios := flag.String("scenarios", "", "comma-separated scenario names or globs (register/*, */kill-leader); default all")
	duration := flag.Duration("duration", 0, "least time per scenario (default: 4 session timeouts in quick, 60s in full)")
	seed := flag.Uint64("seed", 0, "seed of the fault schedules (default random; printed)")
	out := flag.String("out", "report", "report directory")
	list := flag.Bool("list", false, "list the scenarios and faults, then exit")
	broken := flag.Bool("broken", false, "add the deliberately broken workloads (their scenarios must fail)")
	clients := flag.Int("clients", 0, "clients per workload (default 4)")
	sessionTimeout := flag.Duration("session-timeout", 0, "client session timeout (default 3s)")
	backend := flag.String("backend", string(testenv.BackendContainers), "testenv backend: containers or processes")
	allHistories := flag.Bool("all-histories", false, "keep every scenario's history in the report (default: failing, not exercised or inconclusive scenarios and the first of each workload)")
	verbose := flag.Bool("v", false, "log ensemble and fault details")
	workloadNames := flag.String("workloads", "", "comma-separated workload names (lock,leader); default all")
	secure := flag.Bool("secure", false, "TLS client port and enforced digest authentication; every session speaks TLS and authenticates")
	servers := flag.String("servers", "", "comma-separated host:port of an ensemble zkchaos did not start: client faults only")
	root := flag.String("root", "", "znode under which every node of the run is kept and deleted at the end (default /chaos, with -servers /zkchaos-<random>)")
	digest := flag.String("digest", "", "user:password every session authenticates as (digest scheme)")
	tlsCA := flag.String("tls-ca", "", "PEM file of the CA of the -servers' certificates: connect over TLS")
	mutantSeeds := flag.Int("mutant-seeds", 0, "run every mutant (or those -workloads names) under its exposing faults on this many seeds; exit 1 unless each is caught on every seed")
	flag.Parse()

	var serverList []string
	for _, s := range strings.Split(*servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			serverList = append(serverList, s)
		}
	}
	cfg, err := chaos.Config{
		Tier: faults.Tier(*tier), Duration: *duration, Seed: *seed, Out: *out, Clients: *clients,
		SessionTimeout: *sessionTimeout, Progress: os.Stdout, Command: commandLine(os.Args),
		Secure: *secure, Servers: serverList, Root: *root, Digest: *digest, TLSCA: *tlsCA,
		Replay: replayBase(*tier, *mutantSeeds > 0), Select: *scenarios, AllHistories: *allHistories,
	}.WithDefaults()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkchaos:", err)
		return 2
	}
	if *mutantSeeds > 0 {
		return runMutants(cfg, *mutantSeeds, *seed != 0, *workloadNames, testenv.Backend(*backend), *verbose)
	}
	ws := workloads.All()
	if *broken {
		ws = append(ws, workloads.Broken()...)
	}
	if ws, err = chaos.SelectWorkloads(ws, *workloadNames); err != nil {
		fmt.Fprintln(os.Stderr, "zkchaos:", err)
		return 2
	}
	scs, err := chaos.Select(chaos.Matrix(cfg.Tier, ws...), *scenarios)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkchaos:", err)
		return 2
	}
	if *list {
		for _, sc := range scs {
			fmt.Printf("%-36s %s\n", sc.Name, sc.FaultNames())
		}
		fmt.Println()
		for _, f := range faults.Catalogue() {
			fmt.Printf("%-24s %s\n", f.Name, f.Doc)
		}
		return 0
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg.Logger = logger
	zerolog.SetGlobalLevel(zerolog.WarnLevel) // Toxiproxy's toxics log every interrupted pipe at trace level

	fmt.Printf("zkchaos: seed %d, tier %s, %d scenarios, %v per scenario at least, session timeout %v, %d clients\n",
		cfg.Seed, cfg.Tier, len(scs), cfg.Duration, cfg.SessionTimeout, cfg.Clients)
	fmt.Printf("zkchaos: replay the run: %s\n", report.Summary{Seed: cfg.Seed, Replay: cfg.Replay, Select: cfg.Select}.ReplayCommand())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, code := ensemble(ctx, cfg, testenv.Backend(*backend), logger)
	if e == nil {
		return code
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := e.Close(cctx); err != nil {
			fmt.Fprintln(os.Stderr, "zkchaos:", err)
		}
	}()

	r, err := chaos.NewRunner(e, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkchaos:", err)
		return 2
	}
	if r.Secure() {
		fmt.Println("zkchaos: secured run: every session speaks TLS and authenticates with the digest scheme")
	}
	sum, err := r.Run(ctx, scs)
	fmt.Println()
	_ = sum.WriteTable(os.Stdout)
	if line := chaos.UpstreamLine(chaos.SelectedVerdicts(chaos.JudgeMutants(sum, workloads.UpstreamCases()), scs)); line != "" {
		fmt.Println("zkchaos: " + line)
	}
	if cfg.Out != "" {
		fmt.Printf("report: %s/%s\n", strings.TrimSuffix(cfg.Out, "/"), report.FileHTML)
	}
	for _, name := range sum.Failing() {
		fmt.Printf("replay %s: %s\n", name, sum.ReplayCommand(name))
	}
	for _, name := range sum.NotExercisedNames() {
		fmt.Printf("replay %s (not exercised): %s\n", name, sum.ReplayCommand(name))
	}
	code = exitCode(err, sum)
	switch code {
	case 2:
		fmt.Fprintln(os.Stderr, "zkchaos:", err)
	case 130:
		fmt.Fprintln(os.Stderr, "zkchaos: interrupted")
	}
	if err != nil && !sum.Failed() && sum.Complete() { // every scenario passed, but the report could not be written
		fmt.Println(report.Clip("FAIL "+err.Error(), report.ConsoleWidth))
		return code
	}
	fmt.Println(sum.FinalLine(report.ConsoleWidth))
	return code
}

// exitCode is a run's exit status: 2 when it could not go on (err), 130
// when interrupted, 1 on a violation, an error or a node left, 3 when
// nothing failed but a scenario was not exercised, else 0.
func exitCode(err error, sum report.Summary) int {
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		return 2
	case err != nil:
		return 130
	case sum.Failed():
		return 1
	case sum.Verdict() == report.VerdictNotExercised:
		return 3 // no failure, but a scenario tested nothing: not a pass
	}
	return 0
}

// replayBase is the command that replays a scenario of this run less its
// -seed and -scenarios (see replayArgs), as commandLine shows it.
func replayBase(tier string, mutants bool) string {
	return commandLine(replayArgs(flag.CommandLine, os.Args[0], tier, mutants))
}

// replayArgs is exe with every flag set on fs but -seed, -scenarios,
// -out, -list, -v and -mutant-seeds (-broken in its stead: the mutants
// are broken workloads), and with -tier always, first.
func replayArgs(fs *flag.FlagSet, exe, tier string, mutants bool) []string {
	args := []string{exe, "-tier", tier}
	broken := mutants
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "seed", "scenarios", "out", "list", "v", "mutant-seeds", "tier":
			return
		case "broken":
			broken = broken || f.Value.String() == "true"
			return
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if v := f.Value.String(); v == "true" {
				args = append(args, "-"+f.Name)
			} else {
				args = append(args, "-"+f.Name+"="+v)
			}
			return
		}
		args = append(args, "-"+f.Name, f.Value.String())
	})
	if broken {
		args = append(args, "-broken")
	}
	return args
}

// ensemble starts the ensemble of the run (with TLS and enforced
// authentication for a secure run), or attaches to cfg.Servers. On
// failure it prints why and returns nil and the exit code.
func ensemble(ctx context.Context, cfg chaos.Config, backend testenv.Backend, logger *slog.Logger) (*testenv.Ensemble, int) {
	began := time.Now()
	if len(cfg.Servers) > 0 {
		e, err := chaos.AttachServers(ctx, cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "zkchaos:", err)
			return nil, 2
		}
		fmt.Printf("zkchaos: attached to %s (not started by zkchaos: server faults are not applicable), root %s\n",
			strings.Join(cfg.Servers, ","), cfg.Root)
		return e, 0
	}
	ecfg := testenv.Config{Backend: backend, Logger: logger, TLS: cfg.Secure, EnforceAuth: cfg.Secure}
	if ecfg.Backend == testenv.BackendContainers {
		fmt.Println("zkchaos: preparing the ZooKeeper image (built once per machine)")
		image, err := testenv.ImageOf(ecfg)
		if err == nil {
			err = testenv.EnsureImage(ctx, image, logger)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "zkchaos:", err)
			return nil, 2
		}
	}
	e, err := testenv.Start(ctx, ecfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkchaos:", err)
		return nil, 2
	}
	fmt.Printf("zkchaos: ensemble %s (%s, ZooKeeper %s) ready in %v\n", e.ID(), e.Backend(), e.ServerVersion(), time.Since(began).Round(time.Millisecond))
	return e, 0
}

// commandLine is how zkchaos was invoked, with a go run temporary binary
// shown as "go run ./lab/cmd/zkchaos": the package is named from the
// repository root (the root module's path, the lab module's without its
// "/lab"), where the README's commands run.
func commandLine(args []string) string {
	var pkg, mod string
	if bi, ok := debug.ReadBuildInfo(); ok {
		pkg, mod = bi.Path, strings.TrimSuffix(bi.Main.Path, "/lab")
	}
	cache := os.Getenv("GOCACHE")
	if dir, err := os.UserCacheDir(); cache == "" && err == nil {
		cache = filepath.Join(dir, "go-build")
	}
	return chaos.CommandLine(chaos.RedactArgs(args), pkg, mod, cache)
}

// runMutants is -mutant-seeds: every selected mutant's scenarios on n
// seeds (cfg.Seed first when fixed, then random ones), each seed's report
// under cfg.Out/seed-<seed>. It returns 0 when every mutant scenario was
// caught on every seed, 1 when one was missed, 2 when the run could not go
// on.
func runMutants(cfg chaos.Config, n int, fixed bool, mutants string, backend testenv.Backend, verbose bool) int {
	cases, err := chaos.SelectMutants(workloads.MutantCases(), mutants)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkchaos:", err)
		return 2
	}
	scs, err := chaos.MutantScenarios(cases)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkchaos:", err)
		return 2
	}
	seeds := []uint64{cfg.Seed}
	if !fixed {
		seeds = nil
	}
	for len(seeds) < n {
		seeds = append(seeds, rand.Uint64()|1)
	}
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg.Logger = logger
	zerolog.SetGlobalLevel(zerolog.WarnLevel)
	fmt.Printf("zkchaos: %d mutant scenarios on %d seeds %v, %v per scenario at least\n", len(scs), len(seeds), seeds, cfg.Duration)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, code := ensemble(ctx, cfg, backend, logger)
	if e == nil {
		return code
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := e.Close(cctx); err != nil {
			fmt.Fprintln(os.Stderr, "zkchaos:", err)
		}
	}()
	began := time.Now()
	out := cfg.Out
	var verdicts []chaos.MutantVerdict
	for _, seed := range seeds {
		cfg.Seed = seed
		if out != "" {
			cfg.Out = filepath.Join(out, fmt.Sprintf("seed-%d", seed))
		}
		fmt.Printf("zkchaos: seed %d\n", seed)
		r, err := chaos.NewRunner(e, cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "zkchaos:", err)
			return 2
		}
		sum, err := r.Run(ctx, scs)
		verdicts = append(verdicts, chaos.JudgeMutants(sum, cases)...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "zkchaos:", err)
			break
		}
	}
	fmt.Println()
	missed := 0
	for _, v := range verdicts {
		fmt.Println(v)
		if !v.Caught {
			missed++
		}
	}
	for _, v := range verdicts {
		if !v.Caught {
			fmt.Printf("replay %s (seed %d): %s\n", v.Scenario, v.Seed, report.Summary{Seed: v.Seed, Replay: cfg.Replay}.ReplayCommand(v.Scenario))
		}
	}
	if line := chaos.UpstreamLine(verdicts); line != "" {
		fmt.Println("zkchaos: " + line)
	}
	verdict, code := "PASS", 0
	if missed > 0 || len(verdicts) < len(scs)*len(seeds) {
		verdict, code = "FAIL", 1
	}
	fmt.Printf("%s %d mutant scenarios x %d seeds: %d caught, %d missed (%v)\n", verdict, len(scs), len(seeds), len(verdicts)-missed, missed+len(scs)*len(seeds)-len(verdicts), time.Since(began).Round(time.Second))
	return code
}
