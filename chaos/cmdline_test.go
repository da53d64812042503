package chaos

import "testing"

func TestCommandLine(t *testing.T) {
	const pkg, mod, cache = "github.com/zkrecipes/zkrecipes/lab/cmd/zkchaos", "github.com/zkrecipes/zkrecipes", "/root/.cache/go-build"
	const hash = "5e20d2730639678155207f768ec247b0016ad836ce64408a3102159dbaa1c446"
	tests := []struct {
		name     string
		args     []string
		pkg, mod string
		want     string
	}{
		{"go run binary", []string{"/tmp/go-build1234567/b001/exe/zkchaos", "-tier", "full"}, pkg, mod, "go run ./lab/cmd/zkchaos -tier full"},
		{"go run with GOTMPDIR", []string{"/var/cache/gotmp/go-build99/b001/exe/zkchaos"}, pkg, mod, "go run ./lab/cmd/zkchaos"},
		{"go run binary in the build cache", []string{cache + "/5e/" + hash + "-d/zkchaos", "-duration", "5s"}, pkg, mod, "go run ./lab/cmd/zkchaos -duration 5s"},
		{"a look-alike outside the build cache", []string{"/srv/5e/" + hash + "-d/zkchaos"}, pkg, mod, "/srv/5e/" + hash + "-d/zkchaos"},
		{"built binary as typed", []string{"./zkchaos", "-seed", "7"}, pkg, mod, "./zkchaos -seed 7"},
		{"installed binary", []string{"zkchaos"}, pkg, mod, "zkchaos"},
		{"an exe directory that go did not make", []string{"/opt/exe/zkchaos"}, pkg, mod, "/opt/exe/zkchaos"},
		{"no build info: shown as invoked", []string{"/tmp/go-build1/b001/exe/zkchaos"}, "", "", "/tmp/go-build1/b001/exe/zkchaos"},
		{"globs and spaces quoted", []string{"zkchaos", "-scenarios", "lock/*,*/kill-leader", "a b", "it's"}, pkg, mod,
			`zkchaos -scenarios 'lock/*,*/kill-leader' 'a b' 'it'\''s'`},
		{"empty argument quoted", []string{"zkchaos", ""}, pkg, mod, "zkchaos ''"},
		{"no args", nil, pkg, mod, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CommandLine(tt.args, tt.pkg, tt.mod, cache); got != tt.want {
				t.Fatalf("CommandLine(%q) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestTestSeed(t *testing.T) {
	tests := []struct {
		name      string
		flag      uint64
		env       string
		want      uint64
		fixed, ok bool
	}{
		{"flag wins", 7, "9", 7, true, true},
		{"environment", 0, " 20261122 ", 20261122, true, true},
		{"not a number", 0, "abc", 0, false, false},
		{"zero is not a seed", 0, "0", 0, false, false},
		{"negative", 0, "-3", 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fixed, err := testSeed(tt.flag, tt.env)
			if (err == nil) != tt.ok || got != tt.want || fixed != tt.fixed {
				t.Fatalf("testSeed(%d, %q) = %d, %v, %v; want %d, %v, ok %v", tt.flag, tt.env, got, fixed, err, tt.want, tt.fixed, tt.ok)
			}
		})
	}
	a, fixedA, _ := testSeed(0, "")
	b, _, _ := testSeed(0, "")
	if fixedA || a == 0 || a == b {
		t.Fatalf("unset: seeds %d and %d (fixed %v); want two different random ones", a, b, fixedA)
	}
}
