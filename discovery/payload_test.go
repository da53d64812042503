package discovery

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestJavaPayload(t *testing.T) {
	type details struct {
		Description string `json:"description"`
		Weight      int    `json:"weight"`
	}
	tests := []struct {
		class string
		v     any
		want  string
	}{
		{"com.example.Details", details{"a <b>", 3}, `{"@class":"com.example.Details","description":"a <b>","weight":3}`},
		{"java.util.HashMap", map[string]int{"b": 2, "a": 1}, `{"@class":"java.util.HashMap","a":1,"b":2}`},
		{"Empty", struct{}{}, `{"@class":"Empty"}`},
		{"Raw", json.RawMessage(` { "x" : 1 } `), `{"@class":"Raw","x":1}`},
	}
	for _, tt := range tests {
		got, err := JavaPayload(tt.class, tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("JavaPayload(%q, %v) = %s, %v; want %s", tt.class, tt.v, got, err, tt.want)
		}
		if err := checkPayload(got); err != nil {
			t.Errorf("JavaPayload's %s refused by checkPayload: %v", got, err)
		}
		if c := (Instance{Payload: got}).PayloadClass(); c != tt.class {
			t.Errorf("PayloadClass of %s = %q", got, c)
		}
	}
	for _, bad := range []struct {
		class string
		v     any
	}{
		{"", map[string]int{}}, {"C", 5}, {"C", []int{1}}, {"C", nil}, {"C", "s"},
		{"C", map[string]string{"@class": "D"}}, {"C", func() {}},
	} {
		if _, err := JavaPayload(bad.class, bad.v); !errors.Is(err, ErrInvalidInstance) {
			t.Errorf("JavaPayload(%q, %#v) = %v, want ErrInvalidInstance", bad.class, bad.v, err)
		}
	}
}

func TestDecodePayload(t *testing.T) {
	var n int64
	if err := (Instance{Payload: json.RawMessage(`["java.lang.Long",12345678901]`)}).DecodePayload(&n); err != nil || n != 12345678901 {
		t.Errorf("wrapped long: %d, %v", n, err)
	}
	var list []any
	if err := (Instance{Payload: json.RawMessage(`["java.util.ArrayList",[1,"two"]]`)}).DecodePayload(&list); err != nil || len(list) != 2 {
		t.Errorf("wrapped list: %v, %v", list, err)
	}
	var d struct {
		Description string `json:"description"`
	}
	if err := (Instance{Payload: json.RawMessage(`{"@class":"X","description":"hi"}`)}).DecodePayload(&d); err != nil || d.Description != "hi" {
		t.Errorf("object: %+v, %v", d, err)
	}
	s := "unchanged"
	if err := (Instance{}).DecodePayload(&s); err != nil || s != "unchanged" {
		t.Errorf("nil payload: %q, %v", s, err)
	}
	if err := (Instance{Payload: json.RawMessage(`null`)}).DecodePayload(&s); err != nil || s != "unchanged" {
		t.Errorf("null payload: %q, %v", s, err)
	}
	if err := (Instance{Payload: json.RawMessage(`"x"`)}).DecodePayload(&n); err == nil {
		t.Error("a string decoded into an int64")
	}
}

func TestPayloadClass(t *testing.T) {
	for _, tt := range []struct{ payload, want string }{
		{``, ""}, {`null`, ""}, {`"s"`, ""}, {`7`, ""}, {`true`, ""}, {`{"a":1}`, ""},
		{`{"a":1,"@class":"java.util.TreeMap"}`, "java.util.TreeMap"},
		{`["java.lang.Long",5]`, "java.lang.Long"},
		{`[1,2]`, ""}, {`{"@class":5}`, ""},
	} {
		if got := (Instance{Payload: json.RawMessage(tt.payload)}).PayloadClass(); got != tt.want {
			t.Errorf("PayloadClass(%s) = %q, want %q", tt.payload, got, tt.want)
		}
	}
}

// checkPayload refuses what Curator 5.4's reader fails on (checked against
// Curator by lab/interop's TestDiscoveryGoJSONReadByCurator).
func TestCheckPayload(t *testing.T) {
	for _, tt := range []struct {
		payload string
		ok      bool
	}{
		{``, true}, {`null`, true}, {`"s"`, true}, {`1`, true}, {`12345678901`, true}, {`3.5`, true}, {`false`, true},
		{`{}`, true}, {`{"a":[1,2]}`, true}, {`{"@class":"X","a":1}`, true},
		{`["java.lang.Long",5]`, true}, {`["java.util.ArrayList",[1,2]]`, true},
		{`[1,2]`, false}, {`[]`, false}, {`["java.util.ArrayList"]`, false}, {`["a",1,2]`, false}, {`[1,"a"]`, false},
		{`{"@class":5}`, false}, {`{"@class":""}`, false}, {`{"@class":null}`, false},
		{`{`, false}, {`nul`, false},
	} {
		err := checkPayload(json.RawMessage(tt.payload))
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalidInstance)) {
			t.Errorf("checkPayload(%s) = %v, want ok %v", tt.payload, err, tt.ok)
		}
	}
}
