package discovery

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestParseURISpec(t *testing.T) {
	v := func(s string) URIPart { return URIPart{Value: s, Variable: true} }
	l := func(s string) URIPart { return URIPart{Value: s} }
	tests := []struct {
		raw  string
		want []URIPart
	}{
		{"", []URIPart{}},
		{"http://x", []URIPart{l("http://x")}},
		{"{scheme}://{address}:{port}/v1", []URIPart{v("scheme"), l("://"), v("address"), l(":"), v("port"), l("/v1")}},
		{"{ port }", []URIPart{v("port")}},               // variables are trimmed
		{" a {b} ", []URIPart{l(" a "), v("b"), l(" ")}}, // literals are not
		{"{}", []URIPart{}},                              // an empty variable is dropped (StringTokenizer skips it)
		{"{ }", []URIPart{v("")}},                        // a blank one is kept, trimmed
		{"{a}{b}", []URIPart{v("a"), v("b")}},
		{"{[}x{]}", []URIPart{v("["), l("x"), v("]")}},
	}
	for _, tt := range tests {
		got, err := ParseURISpec(tt.raw)
		if err != nil {
			t.Errorf("ParseURISpec(%q): %v", tt.raw, err)
			continue
		}
		if !reflect.DeepEqual(got.Parts, tt.want) {
			t.Errorf("ParseURISpec(%q) = %#v, want %#v", tt.raw, got.Parts, tt.want)
		}
	}
	for _, raw := range []string{"{", "}", "{a", "a}", "{{a}}", "{a}}", "x{y{z}}"} {
		if _, err := ParseURISpec(raw); !errors.Is(err, ErrInvalidInstance) {
			t.Errorf("ParseURISpec(%q) = %v, want ErrInvalidInstance", raw, err)
		}
	}
}

func TestURISpecBuild(t *testing.T) {
	inst := Instance{Name: "api", ID: "i-1", Address: "10.0.0.1", Port: 8080, RegistrationTime: time.UnixMilli(42), ServiceType: Static}
	tests := []struct {
		spec string
		inst Instance
		vars map[string]string
		want string
	}{
		{"{scheme}://{address}:{port}/{name}/{id}", inst, nil, "http://10.0.0.1:8080/api/i-1"},
		{"{scheme}://{address}:{ssl-port}", Instance{Address: "h", SSLPort: 443}, nil, "https://h:443"},
		{"{scheme}://{address}:{port}", Instance{}, nil, "http://:"}, // nulls build as ""
		{"{registration-time-utc} {service-type}", inst, nil, "42 static"},
		{"{registration-time-utc}|{service-type}|", Instance{}, nil, "0||"},
		{"{[}{name}{]}", inst, nil, "{api}"},
		{"{unknown}x", inst, nil, "x"},
		{"{scheme}://{host}", inst, map[string]string{"scheme": "grpc", "host": "h"}, "grpc://h"},
	}
	for _, tt := range tests {
		u, err := ParseURISpec(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.Build(tt.inst, tt.vars); got != tt.want {
			t.Errorf("%q.Build = %q, want %q", tt.spec, got, tt.want)
		}
	}
	var nilSpec *URISpec
	if got := nilSpec.Build(inst, nil); got != "" {
		t.Errorf("nil spec built %q", got)
	}
}

// The text form parses back to the same parts (adjacent literals, which
// "a{}b" makes as Curator does, merged), and builds the same URI.
func FuzzURISpec(f *testing.F) {
	for _, s := range []string{"{scheme}://{address}:{port}", "{ a }b", "{}", "x{[}y{]}", "{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := ParseURISpec(raw)
		if err != nil {
			return
		}
		back, err := ParseURISpec(u.String())
		if err != nil {
			t.Fatalf("%q parsed, its String %q does not: %v", raw, u.String(), err)
		}
		if !reflect.DeepEqual(merged(back), merged(u)) {
			t.Fatalf("%q -> %#v -> %q -> %#v", raw, u, u.String(), back)
		}
		inst := Instance{Name: "n", ID: "i", Address: "a", Port: 1, SSLPort: 2}
		if u.Build(inst, nil) != back.Build(inst, nil) {
			t.Fatalf("%q and %q build differently", raw, u.String())
		}
	})
}

// merged joins adjacent literal parts.
func merged(u *URISpec) []URIPart {
	var out []URIPart
	for _, p := range u.Parts {
		if n := len(out); n > 0 && !p.Variable && !out[n-1].Variable {
			out[n-1].Value += p.Value
			continue
		}
		out = append(out, p)
	}
	return out
}
