package history

import (
	"errors"
	"reflect"
	"testing"
)

func TestViewFormat(t *testing.T) {
	tests := []struct {
		in   []ViewEntry
		want string
	}{
		{nil, ""},
		{[]ViewEntry{{"c2", 0x1b}, {"c1", 0xff00000001}}, "c1@0xff00000001,c2@0x1b"},
		{[]ViewEntry{{"a@b", 2}, {"a@b", 1}}, "a@b@0x1,a@b@0x2"},
	}
	for _, tt := range tests {
		got := FormatView(tt.in)
		if got != tt.want {
			t.Errorf("FormatView(%v) = %q, want %q", tt.in, got, tt.want)
		}
		back, err := ParseView(got)
		if err != nil {
			t.Fatalf("ParseView(%q): %v", got, err)
		}
		if len(back) != len(tt.in) {
			t.Fatalf("ParseView(%q) = %v", got, back)
		}
		for _, e := range tt.in {
			found := false
			for _, b := range back {
				found = found || reflect.DeepEqual(b, e)
			}
			if !found {
				t.Errorf("ParseView(%q) = %v lacks %v", got, back, e)
			}
		}
	}
	for _, bad := range []string{"c1", "c1@0x", "@0x1", "c1@0xzz", "c1@0x1,"} {
		if _, err := ParseView(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseView(%q): err %v, want ErrMalformed", bad, err)
		}
	}
}
