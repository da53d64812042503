package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkrecipes/zkrecipes/chaos/internal/browser"
)

// browserOrSkip returns the headless browser, or skips t.
func browserOrSkip(t *testing.T) string {
	t.Helper()
	bin := browser.Find()
	if bin == "" {
		t.Skipf("no headless browser: apt-get install chromium-headless-shell (scripts/setup.sh does), or set %s", browser.Env)
	}
	return bin
}

// load loads page in the browser and fails t on any of the problems no
// page may have (browser.Page.Problems).
func load(t *testing.T, bin, page string) browser.Page {
	t.Helper()
	p, err := browser.Load(context.Background(), bin, page)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range p.Problems() {
		t.Errorf("%s: %s", filepath.Base(page), pr)
	}
	t.Logf("%s: %s", filepath.Base(page), p)
	return p
}

// The report's pages in headless Chromium (issue 34), on the sample
// summary (lock/cut-short fails with a linearizability and a mutual
// exclusion violation, register/kill-leader passes) and on its passing
// half: the verdict; the needs attention block before the first table and
// on the first screen of a 1440 x 900 window, naming the failing scenario
// with its replay command and linking to its page; porcupine's
// visualisation drawn; no script error, no sideways scroll, each page
// rendered within browser.Budget. chaos.TestReportInBrowser makes the
// same checks on the reports of real runs.
func TestPagesInBrowser(t *testing.T) {
	bin := browserOrSkip(t)
	dir := t.TempDir()
	if err := Write(dir, sampleSummary()); err != nil {
		t.Fatal(err)
	}
	idx := load(t, bin, filepath.Join(dir, FileHTML))
	if idx.Verdict != "FAIL" {
		t.Errorf("index verdict %q, want FAIL", idx.Verdict)
	}
	if idx.AttentionTop < 0 || idx.TableTop < 0 || idx.AttentionTop > idx.TableTop || idx.AttentionTop > browser.Height {
		t.Errorf("needs attention at %.0f px, the first table at %.0f px: want the block first, within %d px", idx.AttentionTop, idx.TableTop, browser.Height)
	}
	if !strings.Contains(idx.AttentionText, "violation lock/cut-short:") || !strings.Contains(idx.AttentionText, "-seed 42 -scenarios 'lock/cut-short'") {
		t.Errorf("needs attention does not name lock/cut-short with its replay command: %q", idx.AttentionText)
	}
	if strings.Contains(idx.AttentionText, "register/kill-leader") {
		t.Errorf("needs attention names the passing register/kill-leader: %q", idx.AttentionText)
	}
	if len(idx.AttentionLinks) == 0 {
		t.Error("needs attention links to nothing")
	}
	for _, href := range idx.AttentionLinks {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(href))); err != nil {
			t.Errorf("needs attention links %s: %v", href, err)
		}
	}
	if p := load(t, bin, filepath.Join(dir, DetailFile("lock/cut-short"))); p.Verdict != "FAIL" {
		t.Errorf("lock/cut-short's page says %q", p.Verdict)
	}
	if p := load(t, bin, filepath.Join(dir, DetailFile("register/kill-leader"))); p.Verdict != "PASS" {
		t.Errorf("register/kill-leader's page says %q", p.Verdict)
	}
	if p := load(t, bin, filepath.Join(dir, VisualFile("lock/cut-short", "linearizable"))); p.PorcupineShape <= 0 {
		t.Errorf("porcupine's visualisation drew %d shapes", p.PorcupineShape)
	}

	pass := sampleSummary()
	pass.Scenarios = pass.Scenarios[:1]
	dir = t.TempDir()
	if err := Write(dir, pass); err != nil {
		t.Fatal(err)
	}
	idx = load(t, bin, filepath.Join(dir, FileHTML))
	if idx.Verdict != "PASS" || idx.AttentionTop >= 0 {
		t.Errorf("passing run: verdict %q, needs attention %q", idx.Verdict, idx.AttentionText)
	}
}

// The probe finds what it looks for: a page that scrolls sideways and
// raises a script error has both problems.
func TestBrowserProbeCanFail(t *testing.T) {
	bin := browserOrSkip(t)
	page := filepath.Join(t.TempDir(), "bad.html")
	src := `<!DOCTYPE html><html><head><title>bad</title></head><body><div style="width:2000px">wide</div><script>noSuchFunction()</script></body></html>`
	if err := os.WriteFile(page, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := browser.Load(context.Background(), bin, page)
	if err != nil {
		t.Fatal(err)
	}
	probs := strings.Join(p.Problems(), "; ")
	if !strings.Contains(probs, "scrolls sideways") || !strings.Contains(probs, "noSuchFunction") || p.AttentionTop != -1 || p.PorcupineShape != -1 {
		t.Errorf("problems %q, page %+v", probs, p)
	}
}
