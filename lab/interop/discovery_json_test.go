package interop

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
)

var update = flag.Bool("update", false, "rewrite discovery/testdata/curator54 from Curator's output")

// curatorTestdata is where the JSON Curator writes is kept, for the
// discovery package's unit tests.
const curatorTestdata = "../../discovery/testdata/curator54"

// b64 encodes s for the Discovery peer's "b64:" values.
func b64(s string) string { return "b64:" + base64.RawURLEncoding.EncodeToString([]byte(s)) }

// unb64 decodes the peer's base64url output.
func unb64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("peer output %q: %v", s, err)
	}
	return b
}

// curatorJSONCases are instances built with Curator's ServiceInstanceBuilder
// and written by its JsonInstanceSerializer (mode=full: the non-default
// serializer that also writes "enabled"). Every field the builder would
// fill from the machine (address, id, time) is given.
var curatorJSONCases = []struct{ file, args string }{
	{"default.json", "name=api id=6c4d3a1e-5b0f-4c1e-9d7a-2f1e0c9b8a01 address=10.0.0.1 port=8080 time=1700000000000"},
	{"static-uri-string.json", "name=api id=web-1 address=10.0.0.2 port=8080 ssl=8443 time=1700000000001 type=STATIC " +
		"uri=" + b64("{scheme}://{address}:{port}/v1") + " payload=string:" + b64("hello world")},
	{"full-details-disabled.json", "mode=full name=api id=d-1 address=10.0.0.3 port=9000 time=1700000000002 " +
		"payload=details:" + b64("a desc") + ",7 enabled=false"},
	{"full-enabled.json", "mode=full name=api id=e-1 address=10.0.0.4 port=9001 time=1700000000003"},
	{"map-payload.json", "name=api id=m-1 address=10.0.0.5 port=9002 time=1700000000004 " +
		"payload=json:" + b64(`{"region":"eu","weight":3,"tags":["a","b"],"nested":{"x":null}}`)},
	{"list-payload-permanent.json", "name=api id=l-1 address=10.0.0.6 time=1700000000005 type=PERMANENT " +
		"payload=json:" + b64(`[1,"two",true]`)},
	{"long-payload.json", "name=api id=n-1 address=10.0.0.7 port=1 time=1700000000006 payload=long:12345678901"},
	{"double-payload-sequential.json", "name=api id=s-1 address=10.0.0.8 port=2 time=1700000000007 type=DYNAMIC_SEQUENTIAL " +
		"payload=json:" + b64(`3.5`)},
	{"nulls.json", "name=api id=z-1 address=- time=0 type=-"},
	{"escapes.json", "name=api id=x-1 address=" + b64("a<b>&c") + " port=3 time=1700000000008 " +
		"uri=" + b64("{scheme}://{address}{[}x{]}?a=1&b=2") + " payload=string:" + b64("é \"q\" \\ / \t\n\x01 \u2028 <>&")},
}

// TestDiscoveryJSONFromCurator checks that the JSON kept in
// discovery/testdata/curator54 is byte for byte what Curator 5.4 writes
// (run with -update to capture it again, from Curator 5.4 only), so that
// the discovery package's unit tests read real Curator output, and that
// Curator 5.7.1 writes the same bytes.
func TestDiscoveryJSONFromCurator(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		p := startDiscoveryPeer(t, rel, e.ConnectString())
		ctx := ctxFor(t, time.Minute)
		for _, c := range curatorJSONCases {
			out, err := p.Do(ctx, "encode "+c.args)
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			got := unb64(t, out)
			path := filepath.Join(curatorTestdata, c.file)
			if *update && rel.Name == peers.Debian12.Name {
				if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to capture it)", err)
			}
			if !bytes.Equal(bytes.TrimSuffix(want, []byte("\n")), got) {
				t.Errorf("%s: Curator %s writes\n%s\nthe testdata holds\n%s", c.file, rel.Curator, got, want)
			}
		}
	})
}

// startDiscoveryPeer starts the Curator discovery peer (Discovery.java).
func startDiscoveryPeer(t *testing.T, rel peers.Release, connect string) *peers.Peer {
	t.Helper()
	peerReady(t, rel, peers.Curator)
	p, err := rel.StartProgramWith(ctxFor(t, 2*time.Minute), peers.Curator, "Discovery", connect, sessionTimeout, peers.JavaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// curatorView is an instance as Curator parsed it: its full JSON (every
// field, "enabled" included) and its payload's Java class.
type curatorView struct {
	JSON  map[string]any
	Raw   []byte
	Class string
}

// parseView parses the peer's "<b64 json> <class>" (or "<b64>,<class>").
func parseView(t *testing.T, s string) curatorView {
	t.Helper()
	b64part, class, ok := strings.Cut(strings.Replace(s, ",", " ", 1), " ")
	if !ok {
		t.Fatalf("peer said %q", s)
	}
	raw := unb64(t, b64part)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("Curator's JSON %s: %v", raw, err)
	}
	return curatorView{JSON: m, Raw: raw, Class: class}
}

// TestDiscoveryGoJSONReadByCurator: the JSON the Go side writes is read by
// Curator 5.4's JsonInstanceSerializer with every field as the Go instance
// says, the payload as the Java type it names; and the payloads Register
// refuses are ones Curator fails on.
func TestDiscoveryGoJSONReadByCurator(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		p := startDiscoveryPeer(t, rel, e.ConnectString())
		ctx := ctxFor(t, time.Minute)
		details, err := discovery.JavaPayload("Discovery$Details", map[string]any{"description": "from Go", "weight": 5})
		if err != nil {
			t.Fatal(err)
		}
		uri, err := discovery.ParseURISpec("{scheme}://{address}:{ssl-port}/x?a=1&b=2")
		if err != nil {
			t.Fatal(err)
		}
		at := time.UnixMilli(1700000000123)
		cases := []struct {
			name  string
			inst  discovery.Instance
			class string // the payload class Curator must read
			want  string // Curator's full JSON of it
		}{
			{"plain", discovery.Instance{Name: "api", ID: "g-1", Address: "10.1.0.1", Port: 8080, RegistrationTime: at, ServiceType: discovery.Dynamic},
				"null",
				`{"name":"api","id":"g-1","address":"10.1.0.1","port":8080,"sslPort":null,"payload":null,"registrationTimeUTC":1700000000123,"serviceType":"DYNAMIC","uriSpec":null,"enabled":true}`},
			{"typed payload, disabled, uri", discovery.Instance{Name: "api", ID: "g-2", Address: "10.1.0.2", SSLPort: 8443, Payload: details,
				RegistrationTime: at, ServiceType: discovery.Static, URISpec: uri, Disabled: true},
				"Discovery$Details",
				`{"name":"api","id":"g-2","address":"10.1.0.2","port":null,"sslPort":8443,"payload":{"@class":"Discovery$Details","description":"from Go","weight":5},"registrationTimeUTC":1700000000123,"serviceType":"STATIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},{"value":"ssl-port","variable":true},{"value":"/x?a=1&b=2","variable":false}]},"enabled":false}`},
			{"object payload without @class", discovery.Instance{Name: "api", ID: "g-3", Payload: json.RawMessage(`{"zone":"b","n":[1,2]}`), ServiceType: discovery.Permanent},
				"java.util.LinkedHashMap",
				`{"name":"api","id":"g-3","address":null,"port":null,"sslPort":null,"payload":{"@class":"java.util.LinkedHashMap","zone":"b","n":[1,2]},"registrationTimeUTC":0,"serviceType":"PERMANENT","uriSpec":null,"enabled":true}`},
			{"string payload, extra field", discovery.Instance{Name: "api", ID: "g-4", Payload: json.RawMessage(`"plain text"`),
				Extra: map[string]json.RawMessage{"zoneFromNewerCurator": json.RawMessage(`{"a":1}`)}},
				"java.lang.String",
				`{"name":"api","id":"g-4","address":null,"port":null,"sslPort":null,"payload":"plain text","registrationTimeUTC":0,"serviceType":null,"uriSpec":null,"enabled":true}`},
			{"wrapped list payload", discovery.Instance{Name: "api", ID: "g-5", Payload: json.RawMessage(`["java.util.ArrayList",[1,"x"]]`), ServiceType: discovery.Dynamic},
				"java.util.ArrayList",
				`{"name":"api","id":"g-5","address":null,"port":null,"sslPort":null,"payload":["java.util.ArrayList",[1,"x"]],"registrationTimeUTC":0,"serviceType":"DYNAMIC","uriSpec":null,"enabled":true}`},
		}
		for _, c := range cases {
			data, err := discovery.Marshal(c.inst)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			out, err := p.Do(ctx, "decode data="+base64.RawURLEncoding.EncodeToString(data))
			if err != nil {
				t.Fatalf("%s: Curator cannot read %s: %v", c.name, data, err)
			}
			v := parseView(t, out)
			if string(v.Raw) != c.want || v.Class != c.class {
				t.Errorf("%s: Go wrote\n%s\nCurator read\n%s (payload %s)\nwant\n%s (payload %s)", c.name, data, v.Raw, v.Class, c.want, c.class)
			}
		}
		// A typed Curator reader (payload class Discovery$Details) reads
		// JavaPayload's output, and fails on the same object without @class.
		for _, c := range []struct {
			payload json.RawMessage
			ok      bool
		}{{details, true}, {json.RawMessage(`{"description":"from Go","weight":5}`), false}} {
			data, _ := discovery.Marshal(discovery.Instance{Name: "api", ID: "t", Payload: c.payload})
			_, err := p.Do(ctx, "decode class=details data="+base64.RawURLEncoding.EncodeToString(data))
			if (err == nil) != c.ok {
				t.Errorf("typed Curator reader on %s: %v, want ok %v", c.payload, err, c.ok)
			}
		}
		// Payloads Register refuses are payloads Curator fails on. (It also
		// refuses a one-element wrapper ["<class>"], which Curator reads as a
		// null payload.)
		d, err := discovery.New(session(t, e.Addrs()), uniquePath(t, "discovery-refused"))
		if err != nil {
			t.Fatal(err)
		}
		for _, payload := range []string{`[1,2]`, `[]`, `["java.util.ArrayList",[1],2]`, `{"@class":5}`, `{"@class":""}`} {
			inst := discovery.Instance{Name: "api", ID: "bad", Payload: json.RawMessage(payload)}
			if _, err := d.Register(ctx, inst); !errors.Is(err, discovery.ErrInvalidInstance) {
				t.Errorf("Register with payload %s: %v, want ErrInvalidInstance", payload, err)
			}
			data, err := discovery.Marshal(inst)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Do(ctx, "decode data="+base64.RawURLEncoding.EncodeToString(data)); err == nil {
				t.Errorf("Curator read payload %s; Register refuses it for nothing", payload)
			}
		}
		if names, err := d.Names(ctx); err != nil || len(names) != 0 {
			t.Fatalf("refused registrations left services %v (%v)", names, err)
		}
	})
}
