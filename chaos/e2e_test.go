package chaos

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/testenv"
)

// ensemble starts one 3-server ensemble for the package's end-to-end tests.
func ensemble(t *testing.T) *testenv.Ensemble {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a ZooKeeper ensemble")
	}
	return testenv.New(t, testenv.Config{})
}

func TestScenarioDebug(t *testing.T) {
	e := ensemble(t)
	r, err := NewRunner(e, Config{Seed: 1, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Split(os.Getenv("CHAOS_SCENARIOS"), ",")
	scs, err := Select(Matrix(TierQuick, &Register{}, &Register{Broken: true}), strings.Join(names, ","))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		res, err := r.RunScenario(ctx, sc)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: took %v ops %d injected %d err %q events %d", res.Scenario, res.Took, res.Ops, res.Injected, res.Err, len(res.History.Events))
		for _, c := range res.Results {
			t.Logf("  %s: checked %d violations %d %s %v", c.Checker, c.Checked, len(c.Violations), c.Note, c.Violations)
		}
	}
}
