package peers

import (
	"errors"
	"strings"
	"testing"
)

func TestParseHold(t *testing.T) {
	tests := []struct {
		line string
		want Hold
		ok   bool
	}{
		{"HOLD lock 100 250 7", Hold{"lock", 100, 250, 7}, true},
		{"HOLD read 5 5 0", Hold{"read", 5, 5, 0}, true},
		{"HOLD lock 250 100 7", Hold{}, false}, // ends before it begins
		{"HOLD lock 1 2", Hold{}, false},
		{"HOLD lock a 2 3", Hold{}, false},
		{"EVENT leader 5", Hold{}, false},
		{"", Hold{}, false},
	}
	for _, tt := range tests {
		got, ok := parseHold(strings.Fields(tt.line))
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseHold(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseHold(f *testing.F) {
	f.Add("HOLD lock 100 250 7")
	f.Add("HOLD x -1 0 -5")
	f.Fuzz(func(t *testing.T, line string) {
		if h, ok := parseHold(strings.Fields(line)); ok && h.T1 < h.T0 {
			t.Fatalf("accepted a hold that ends before it begins: %+v", h)
		}
	})
}

func TestAvailableUnknownKind(t *testing.T) {
	if err := Available("cobol"); !errors.Is(err, ErrMissing) {
		t.Fatalf("Available(cobol) = %v, want ErrMissing", err)
	}
}

// TestReleases: lookup by name, the versions each release names, and an
// unknown release or kind refused with ErrMissing.
func TestReleases(t *testing.T) {
	for _, r := range Releases {
		got, err := Lookup(r.Name)
		if err != nil || got.Name != r.Name || got.Image != r.Image {
			t.Errorf("Lookup(%q) = %+v, %v", r.Name, got, err)
		}
	}
	if _, err := Lookup("sarge"); !errors.Is(err, ErrMissing) {
		t.Errorf("Lookup(sarge) = %v, want ErrMissing", err)
	}
	if Debian12.Version(Curator) != "5.4.0" || Debian12.Version(Kazoo) != "2.8.0" ||
		Testing.Version(Curator) != "5.7.1" || Testing.Version(Kazoo) != "2.11.0" {
		t.Errorf("versions: %v, %v", Debian12, Testing)
	}
	if Debian12.Image != "" || Testing.Image == "" {
		t.Errorf("Debian 12's peers run here, testing's in a container: %+v %+v", Debian12, Testing)
	}
	if err := Testing.Available("cobol"); !errors.Is(err, ErrMissing) {
		t.Errorf("Testing.Available(cobol) = %v, want ErrMissing", err)
	}
}
