// Package mutation holds the mutation campaign's mutants (one git patch per
// file, by package: docs/mutation-campaign.md); scripts/mutation.sh replays
// them. Its test keeps them replayable: a refactoring of the library that
// moves the code a mutant changes must move the mutant with it.
package mutation

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPatchesApply: every mutant (the withdrawn equivalents too, kept to be
// read and replayed) applies to the tree it sits in, and its header names
// the guarantee it breaks and what exposes it, as scripts/mutation.sh
// expects.
func TestPatchesApply(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--show-toplevel").Output(); err != nil || filepath.Clean(strings.TrimSpace(string(out))) != root {
		t.Skipf("%s is not the root of a git work tree (%v)", root, err)
	}
	patches, err := filepath.Glob("*/*.patch*")
	if err != nil {
		t.Fatal(err)
	}
	if len(patches) < 30 {
		t.Fatalf("%d mutants found, want the campaign's (at least 30)", len(patches))
	}
	for _, p := range patches {
		t.Run(p, func(t *testing.T) {
			text, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, field := range []string{"# guarantee:", "# exposed-by:"} {
				if !strings.Contains(string(text), "\n"+field) {
					t.Errorf("header has no %q line", field)
				}
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("git", "-C", root, "apply", "--check", abs).CombinedOutput(); err != nil {
				t.Errorf("does not apply to this tree: %v\n%s", err, out)
			}
		})
	}
}
