package quickstart_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocs: the README is an entry point of at most 300 lines, and every
// relative link in the README, the changelog, docs/, chaos/ and testenv/
// names a file or directory that exists.
func TestDocs(t *testing.T) {
	root := "../../.."
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 300 {
		t.Errorf("README.md has %d lines, want at most 300", n)
	}
	pages := []string{"README.md", "CHANGELOG.md", "chaos/README.md", "testenv/README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		pages = append(pages, rel)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, p := range pages {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			if _, err := os.Stat(filepath.Join(root, filepath.Dir(p), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", p, m[1])
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link checked")
	}
}

// TestReadmeExamplesExist: every Example the README names beside a link
// to an example_test.go is a function of that file, so that the README's
// pointers to the Examples stay true when Examples are renamed.
func TestReadmeExamplesExist(t *testing.T) {
	root := "../../.."
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`\[[^]]*\]\(([^)]*example_test\.go)\) \(([^)]*)\)`)
	name := regexp.MustCompile("`(Example[A-Za-z0-9_]*)`")
	checked := 0
	for _, m := range line.FindAllStringSubmatch(string(readme), -1) {
		src, err := os.ReadFile(filepath.Join(root, m[1]))
		if err != nil {
			t.Errorf("README.md links to %s: %v", m[1], err)
			continue
		}
		for _, n := range name.FindAllStringSubmatch(m[2], -1) {
			checked++
			if !strings.Contains(string(src), "\nfunc "+n[1]+"() {") {
				t.Errorf("README.md names %s in %s, which has no such Example", n[1], m[1])
			}
		}
	}
	if checked < 14 {
		t.Fatalf("%d Examples named in README.md, want at least one per package (14)", checked)
	}
}
