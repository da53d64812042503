package discovery

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustURI(t testing.TB, raw string) *URISpec {
	t.Helper()
	u, err := ParseURISpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// The files in testdata/curator54 are what Curator 5.4's
// JsonInstanceSerializer wrote for instances built with its
// ServiceInstanceBuilder (captured and checked by lab/interop's
// TestDiscoveryJSONFromCurator). Each reads as the instance Curator built,
// and writes back byte for byte, except where noted.
func TestCuratorTestdata(t *testing.T) {
	ms := func(n int64) time.Time { return time.UnixMilli(n) }
	tests := []struct {
		file  string
		want  Instance
		exact bool   // Marshal writes Curator's bytes
		why   string // when not
	}{
		{"default.json", Instance{Name: "api", ID: "6c4d3a1e-5b0f-4c1e-9d7a-2f1e0c9b8a01", Address: "10.0.0.1", Port: 8080,
			RegistrationTime: ms(1700000000000), ServiceType: Dynamic}, true, ""},
		{"static-uri-string.json", Instance{Name: "api", ID: "web-1", Address: "10.0.0.2", Port: 8080, SSLPort: 8443,
			Payload: json.RawMessage(`"hello world"`), RegistrationTime: ms(1700000000001), ServiceType: Static,
			URISpec: mustURI(t, "{scheme}://{address}:{port}/v1")}, true, ""},
		{"full-details-disabled.json", Instance{Name: "api", ID: "d-1", Address: "10.0.0.3", Port: 9000,
			Payload:          json.RawMessage(`{"@class":"Discovery$Details","description":"a desc","weight":7}`),
			RegistrationTime: ms(1700000000002), ServiceType: Dynamic, Disabled: true}, true, ""},
		{"full-enabled.json", Instance{Name: "api", ID: "e-1", Address: "10.0.0.4", Port: 9001,
			RegistrationTime: ms(1700000000003), ServiceType: Dynamic}, false,
			`Curator's non-default serializer writes "enabled":true; we write Curator's default (no "enabled")`},
		{"map-payload.json", Instance{Name: "api", ID: "m-1", Address: "10.0.0.5", Port: 9002,
			Payload:          json.RawMessage(`{"@class":"java.util.LinkedHashMap","region":"eu","weight":3,"tags":["a","b"],"nested":{"x":null}}`),
			RegistrationTime: ms(1700000000004), ServiceType: Dynamic}, true, ""},
		{"list-payload-permanent.json", Instance{Name: "api", ID: "l-1", Address: "10.0.0.6",
			Payload:          json.RawMessage(`["java.util.ArrayList",[1,"two",true]]`),
			RegistrationTime: ms(1700000000005), ServiceType: Permanent}, true, ""},
		{"long-payload.json", Instance{Name: "api", ID: "n-1", Address: "10.0.0.7", Port: 1,
			Payload: json.RawMessage(`["java.lang.Long",12345678901]`), RegistrationTime: ms(1700000000006), ServiceType: Dynamic}, true, ""},
		{"double-payload-sequential.json", Instance{Name: "api", ID: "s-1", Address: "10.0.0.8", Port: 2,
			Payload: json.RawMessage(`3.5`), RegistrationTime: ms(1700000000007), ServiceType: DynamicSequential}, true, ""},
		{"nulls.json", Instance{Name: "api", ID: "z-1"}, true, ""},
		{"escapes.json", Instance{Name: "api", ID: "x-1", Address: "a<b>&c", Port: 3,
			Payload:          json.RawMessage(`"é \"q\" \\ / \t\n\u0001 ` + "\u2028" + ` <>&"`),
			RegistrationTime: ms(1700000000008), ServiceType: Dynamic, URISpec: mustURI(t, "{scheme}://{address}{[}x{]}?a=1&b=2")}, true, ""},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		data, err := os.ReadFile(filepath.Join("testdata", "curator54", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.TrimSuffix(data, []byte("\n"))
		got, err := Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if !reflect.DeepEqual(normal(got), normal(tt.want)) {
			t.Errorf("%s: read\n%#v\nwant\n%#v", tt.file, got, tt.want)
		}
		out, err := Marshal(got)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if tt.exact && !bytes.Equal(out, data) {
			t.Errorf("%s: wrote\n%s\nCurator wrote\n%s", tt.file, out, data)
		}
		if !tt.exact {
			if bytes.Equal(out, data) {
				t.Errorf("%s: now written byte for byte; drop the exception (%s)", tt.file, tt.why)
			}
			back, err := Unmarshal(out)
			if err != nil || !reflect.DeepEqual(normal(back), normal(got)) {
				t.Errorf("%s: written back as %s, which reads %#v (%v)", tt.file, out, back, err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "curator54", "*.json"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s has no expectation here", f)
		}
	}
}

// normal makes instances comparable with reflect.DeepEqual: compact
// payloads, the monotonic clock reading dropped.
func normal(inst Instance) Instance {
	if inst.Payload != nil {
		var b bytes.Buffer
		if json.Compact(&b, inst.Payload) == nil {
			inst.Payload = b.Bytes()
		}
	}
	inst.RegistrationTime = inst.RegistrationTime.Round(0)
	if !inst.RegistrationTime.IsZero() {
		inst.RegistrationTime = time.UnixMilli(inst.RegistrationTime.UnixMilli())
	}
	return inst
}

// Null handling: the zero value of each field is Java's null (or the
// default), both ways.
func TestMarshalZeroValues(t *testing.T) {
	out, err := Marshal(Instance{})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"","id":"","address":null,"port":null,"sslPort":null,"payload":null,"registrationTimeUTC":0,"serviceType":null,"uriSpec":null}`
	if string(out) != want {
		t.Fatalf("zero Instance wrote\n%s\nwant\n%s", out, want)
	}
	// An empty (not nil) payload and an empty URISpec.
	out, err = Marshal(Instance{Name: "a", ID: "b", Payload: json.RawMessage("  "), URISpec: &URISpec{}, Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	const want2 = `{"name":"a","id":"b","address":null,"port":null,"sslPort":null,"payload":null,"registrationTimeUTC":0,"serviceType":null,"uriSpec":{"parts":[]},"enabled":false}`
	if string(out) != want2 {
		t.Fatalf("wrote\n%s\nwant\n%s", out, want2)
	}
}

// How fields read, including the forms Curator 5.4's reader accepts
// without writing them (checked against Curator by lab/interop).
func TestUnmarshalFields(t *testing.T) {
	tests := []struct {
		in   string
		want Instance
	}{
		{`{"name":"a","id":"b"}`, Instance{Name: "a", ID: "b", ServiceType: Dynamic}}, // missing type: Curator's default
		{`{"name":"a","id":"b","serviceType":null}`, Instance{Name: "a", ID: "b"}},
		{`{"name":"a","id":"b","serviceType":"NEWER_TYPE"}`, Instance{Name: "a", ID: "b", ServiceType: "NEWER_TYPE"}},
		{`{"name":"a","id":"b","enabled":true}`, Instance{Name: "a", ID: "b", ServiceType: Dynamic}},
		{`{"name":"a","id":"b","enabled":false}`, Instance{Name: "a", ID: "b", ServiceType: Dynamic, Disabled: true}},
		{`{"name":"a","id":"b","enabled":null}`, Instance{Name: "a", ID: "b", ServiceType: Dynamic, Disabled: true}}, // as Jackson: null boolean is false
		{`{"name":null,"id":null,"address":null,"port":null,"sslPort":null,"payload":null,"registrationTimeUTC":null,"uriSpec":null}`,
			Instance{ServiceType: Dynamic}},
		{`{"name":"a","id":"b","port":0,"sslPort":65535,"address":""}`, Instance{Name: "a", ID: "b", SSLPort: 65535, ServiceType: Dynamic}},
		{`{"name":"a","id":"b","registrationTimeUTC":1.9}`, Instance{Name: "a", ID: "b", RegistrationTime: time.UnixMilli(1), ServiceType: Dynamic}},
		{`{"name":"a","id":"b","registrationTimeUTC":"7"}`, Instance{Name: "a", ID: "b", RegistrationTime: time.UnixMilli(7), ServiceType: Dynamic}}, // Jackson coerces it too
		{`{"name":"a","id":"b","registrationTimeUTC":-5}`, Instance{Name: "a", ID: "b", RegistrationTime: time.UnixMilli(-5), ServiceType: Dynamic}},
		{`{"name":"a","id":"b","uriSpec":{"parts":null}}`, Instance{Name: "a", ID: "b", URISpec: &URISpec{Parts: []URIPart{}}, ServiceType: Dynamic}},
		{`{"name":"a","id":"b","payload": [ "java.lang.Long" , 5 ] }`, Instance{Name: "a", ID: "b", Payload: json.RawMessage(`["java.lang.Long",5]`), ServiceType: Dynamic}},
		{`{"zone":{"x":[1]},"name":"a","id":"b","later":null}`, Instance{Name: "a", ID: "b", ServiceType: Dynamic,
			Extra: map[string]json.RawMessage{"zone": json.RawMessage(`{"x":[1]}`), "later": json.RawMessage(`null`)}}},
	}
	for _, tt := range tests {
		got, err := Unmarshal([]byte(tt.in))
		if err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Unmarshal(%s) =\n%#v\nwant\n%#v", tt.in, got, tt.want)
		}
	}
}

func TestUnmarshalMalformed(t *testing.T) {
	for _, in := range []string{
		``, `null`, `[]`, `"x"`, `{`, `{"name":1}`, `{"port":"80"}`, `{"port":1.5}`, `{"sslPort":true}`,
		`{"registrationTimeUTC":"x"}`, `{"registrationTimeUTC":1e300}`, `{"serviceType":5}`, `{"uriSpec":[]}`,
		`{"uriSpec":{"parts":[{"value":1}]}}`, `{"enabled":"yes"}`, `{"address":{}}`,
	} {
		if _, err := Unmarshal([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Unmarshal(%q) = %v, want ErrMalformed", in, err)
		}
	}
}

// Fields a later Curator adds survive a read and a write back, after the
// known ones, in name order.
func TestExtraRoundTrip(t *testing.T) {
	in := `{"name":"a","id":"b","address":null,"port":null,"sslPort":null,"payload":null,"registrationTimeUTC":0,"serviceType":"DYNAMIC","uriSpec":null,"zeta":[1, 2],"alpha":{"k":"<v>"}}`
	inst, err := Unmarshal([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(inst)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"a","id":"b","address":null,"port":null,"sslPort":null,"payload":null,"registrationTimeUTC":0,"serviceType":"DYNAMIC","uriSpec":null,"alpha":{"k":"<v>"},"zeta":[1,2]}`
	if string(out) != want {
		t.Fatalf("wrote\n%s\nwant\n%s", out, want)
	}
}

func TestMarshalErrors(t *testing.T) {
	for _, inst := range []Instance{
		{Payload: json.RawMessage(`{`)},
		{Extra: map[string]json.RawMessage{"port": json.RawMessage(`1`)}},
		{Extra: map[string]json.RawMessage{"enabled": json.RawMessage(`true`)}},
		{Extra: map[string]json.RawMessage{"x": json.RawMessage(`nope`)}},
	} {
		if _, err := Marshal(inst); !errors.Is(err, ErrInvalidInstance) {
			t.Errorf("Marshal(%+v) = %v, want ErrInvalidInstance", inst, err)
		}
	}
	// Through encoding/json as a field of another value.
	if _, err := json.Marshal(struct{ I Instance }{Instance{Payload: json.RawMessage(`{`)}}); err == nil {
		t.Error("json.Marshal of an invalid payload succeeded")
	}
}

// Instance works as a field of the caller's own JSON.
func TestInstanceInsideJSON(t *testing.T) {
	type wrap struct {
		I  Instance  `json:"i"`
		P  *Instance `json:"p"`
		Ok bool      `json:"ok"`
	}
	in := wrap{I: Instance{Name: "a", ID: "b", Port: 1, ServiceType: Static}, Ok: true}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back wrap
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Fatalf("%s read back as %+v", b, back)
	}
}

// Every instance this package reads writes back to JSON that reads as the
// same instance, and writing is stable: Marshal(Unmarshal(Marshal(x))) ==
// Marshal(x).
func FuzzInstanceJSON(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "curator54", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"name":"a","id":"b","enabled":null,"x":1}`))
	f.Add([]byte(`{"payload":{"@class":"X","a":[1,{"b":null}]},"uriSpec":{"parts":[{"value":"{","variable":false}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		inst, err := Unmarshal(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Unmarshal error %v does not wrap ErrMalformed", err)
			}
			return
		}
		out, err := Marshal(inst)
		if err != nil {
			t.Fatalf("read %s but cannot write it: %v", data, err)
		}
		back, err := Unmarshal(out)
		if err != nil {
			t.Fatalf("wrote %s, which does not read: %v", out, err)
		}
		if !reflect.DeepEqual(normal(back), normal(inst)) {
			t.Fatalf("%s read as\n%#v\nwritten as %s, read back as\n%#v", data, inst, out, back)
		}
		again, err := Marshal(back)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("writing is not stable:\n%s\n%s (%v)", out, again, err)
		}
		if !json.Valid(out) || !strings.HasPrefix(string(out), `{"name":`) {
			t.Fatalf("wrote %s", out)
		}
	})
}
