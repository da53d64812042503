package history

import (
	"errors"
	"reflect"
	"testing"
)

func TestFormatInstances(t *testing.T) {
	for _, tt := range []struct {
		view map[string]int64
		want string
	}{
		{nil, ""},
		{map[string]int64{}, ""},
		{map[string]int64{"b-1": 3, "a=x": 10, "c": 0}, "a=x=10,b-1=3,c=0"},
	} {
		got := FormatInstances(tt.view)
		if got != tt.want {
			t.Errorf("FormatInstances(%v) = %q, want %q", tt.view, got, tt.want)
		}
		back, err := ParseInstances(got)
		if err != nil {
			t.Fatalf("ParseInstances(%q): %v", got, err)
		}
		if len(tt.view) > 0 && !reflect.DeepEqual(back, tt.view) || len(tt.view) == 0 && len(back) != 0 {
			t.Errorf("ParseInstances(%q) = %v, want %v", got, back, tt.view)
		}
	}
	for _, bad := range []string{"a", "=3", "a=", "a=x", "a=1,a=2", "a=1,"} {
		if _, err := ParseInstances(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseInstances(%q) = %v, want ErrMalformed", bad, err)
		}
	}
}
