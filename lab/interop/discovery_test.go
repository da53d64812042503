package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/zkrecipes/discovery"
	"github.com/zkrecipes/zkrecipes/lab/internal/peers"
)

// waitPeer polls the peer's command until its answer is want.
func waitPeer(t *testing.T, ctx context.Context, p *peers.Peer, command, want string) {
	t.Helper()
	var got string
	for {
		var err error
		got, err = p.Do(ctx, command)
		if err != nil {
			t.Fatal(err)
		}
		if got == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%q answers %q, want %q", command, got, want)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// queryCurator runs Curator's queryForInstances and returns the views by
// id.
func queryCurator(t *testing.T, ctx context.Context, p *peers.Peer, base, name string) map[string]curatorView {
	t.Helper()
	out, err := p.Do(ctx, fmt.Sprintf("query base=%s name=%s", base, name))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(out)
	n, err := strconv.Atoi(f[0])
	if err != nil || len(f) != n+1 {
		t.Fatalf("query said %q", out)
	}
	views := map[string]curatorView{}
	for _, v := range f[1:] {
		view := parseView(t, v)
		views[view.JSON["id"].(string)] = view
	}
	return views
}

// TestDiscoveryGoSeenByCurator: instances a Go service registers are seen
// by a Curator ServiceDiscovery (queryForNames, queryForInstances,
// queryForInstance with a typed payload) and its ServiceProvider, with
// their payloads, through updates, a disable, an expiry of the Go
// session and an unregistration.
func TestDiscoveryGoSeenByCurator(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		ctx := ctxFor(t, 3*time.Minute)
		link, err := e.NewLink("discovery-go-expiry")
		if err != nil {
			t.Fatal(err)
		}
		s := session(t, link.Addrs())
		base := uniquePath(t, "discovery-go")
		d, err := discovery.New(s, base)
		if err != nil {
			t.Fatal(err)
		}
		details, err := discovery.JavaPayload("Discovery$Details", map[string]any{"description": "go service", "weight": 3})
		if err != nil {
			t.Fatal(err)
		}
		uri, err := discovery.ParseURISpec("{scheme}://{address}:{port}/api")
		if err != nil {
			t.Fatal(err)
		}
		r1, err := d.Register(ctx, discovery.Instance{Name: "api", ID: "go-1", Address: "10.2.0.1", Port: 8080, Payload: details, URISpec: uri})
		if err != nil {
			t.Fatal(err)
		}
		r2, err := d.Register(ctx, discovery.Instance{Name: "api", ID: "go-2", Address: "10.2.0.2", Port: 8081,
			Payload: json.RawMessage(`"static one"`), ServiceType: discovery.Static})
		if err != nil {
			t.Fatal(err)
		}

		p := startDiscoveryPeer(t, rel, e.ConnectString())
		if out, err := p.Do(ctx, "names base="+base); err != nil || out != "api" {
			t.Fatalf("Curator's queryForNames = %q, %v", out, err)
		}
		views := queryCurator(t, ctx, p, base, "api")
		if len(views) != 2 {
			t.Fatalf("Curator sees %d instances", len(views))
		}
		v1, v2 := views["go-1"], views["go-2"]
		if v1.Class != "Discovery$Details" || v1.JSON["address"] != "10.2.0.1" || v1.JSON["port"] != 8080.0 ||
			v1.JSON["serviceType"] != "DYNAMIC" || v1.JSON["enabled"] != true ||
			v1.JSON["registrationTimeUTC"] != float64(r1.Instance().RegistrationTime.UnixMilli()) {
			t.Fatalf("Curator read go-1 as %s (payload %s)", v1.Raw, v1.Class)
		}
		if pl := v1.JSON["payload"].(map[string]any); pl["description"] != "go service" || pl["weight"] != 3.0 {
			t.Fatalf("Curator read go-1's payload as %v", pl)
		}
		if v2.Class != "java.lang.String" || v2.JSON["payload"] != "static one" || v2.JSON["serviceType"] != "STATIC" {
			t.Fatalf("Curator read go-2 as %s (payload %s)", v2.Raw, v2.Class)
		}
		// A Curator discovery typed on the payload class reads it as that class.
		out, err := p.Do(ctx, fmt.Sprintf("instance base=%s name=api id=go-1 class=details", base))
		if err != nil || parseView(t, out).Class != "Discovery$Details" {
			t.Fatalf("typed queryForInstance = %q, %v", out, err)
		}

		// Curator's ServiceProvider follows the Go side.
		if _, err := p.Do(ctx, fmt.Sprintf("provider-start base=%s name=api strategy=round-robin", base)); err != nil {
			t.Fatal(err)
		}
		waitPeer(t, ctx, p, "provider-all", "go-1 go-2")
		inst := r1.Instance()
		inst.Disabled = true
		if err := r1.Update(ctx, inst); err != nil {
			t.Fatal(err)
		}
		waitPeer(t, ctx, p, "provider-all", "go-2") // Curator filters disabled instances
		if v := queryCurator(t, ctx, p, base, "api")["go-1"]; v.JSON["enabled"] != false {
			t.Fatalf("Curator read the disabled go-1 as %s", v.Raw)
		}
		inst.Disabled = false
		inst.Port = 9090
		if err := r1.Update(ctx, inst); err != nil {
			t.Fatal(err)
		}
		waitPeer(t, ctx, p, "provider-all", "go-1 go-2")

		// The Go session expires: Curator's provider sees go-1 leave with it
		// and come back when the Go side creates it again.
		old := s.ID()
		if err := link.ExpireSession(ctx, old); err != nil {
			t.Fatal(err)
		}
		waitPeer(t, ctx, p, "provider-all", "go-1 go-2")
		if v := queryCurator(t, ctx, p, base, "api")["go-1"]; v.JSON["port"] != 9090.0 || s.ID() == old {
			t.Fatalf("after the expiry Curator reads go-1 as %s (session 0x%x, was 0x%x)", v.Raw, s.ID(), old)
		}

		if err := r2.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		waitPeer(t, ctx, p, "provider-all", "go-1")
		if err := r1.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		waitPeer(t, ctx, p, "provider-all", "")
		if _, err := p.Do(ctx, "provider-close"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDiscoveryCuratorSeenByGo: instances a Curator ServiceDiscovery
// registers are seen by Go's queries and Provider, with their payloads
// (a Java object, a map, a Long, a string), through an update, a disable
// (Curator's full serializer), an unregistration and Curator's own
// re-registration after its session expires.
func TestDiscoveryCuratorSeenByGo(t *testing.T) {
	forEachRelease(t, func(t *testing.T, rel peers.Release) {
		e := ensemble(t)
		ctx := ctxFor(t, 3*time.Minute)
		link, err := e.NewLink("discovery-curator-expiry")
		if err != nil {
			t.Fatal(err)
		}
		p := startDiscoveryPeer(t, rel, link.ConnectString())
		base := uniquePath(t, "discovery-curator")
		for _, cmd := range []string{
			"register mode=full name=api id=j-1 address=10.3.0.1 port=7001 time=1700000000001 payload=details:" + b64("java service") + ",4",
			"register name=api id=j-2 address=10.3.0.2 port=7002 ssl=7443 time=1700000000002 payload=json:" + b64(`{"zone":"c","ids":[1,2]}`),
			"register name=api id=j-3 address=10.3.0.3 time=1700000000003 type=STATIC payload=long:12345678901",
			"register name=api id=j-4 address=10.3.0.4 time=1700000000004 type=PERMANENT payload=string:" + b64("text") +
				" uri=" + b64("{scheme}://{address}:{ssl-port}"),
			"register name=web id=w-1 address=10.3.0.9 time=1700000000009",
		} {
			if _, err := p.Do(ctx, "register base="+base+" "+strings.TrimPrefix(cmd, "register ")); err != nil {
				t.Fatal(err)
			}
		}
		s := session(t, e.Addrs())
		d, err := discovery.New(s, base)
		if err != nil {
			t.Fatal(err)
		}
		names, err := d.Names(ctx)
		if err != nil || strings.Join(names, ",") != "api,web" {
			t.Fatalf("Names = %v, %v", names, err)
		}
		insts, err := d.Instances(ctx, "api")
		if err != nil || len(insts) != 4 {
			t.Fatalf("Instances = %+v, %v", insts, err)
		}
		byID := map[string]discovery.Instance{}
		for _, inst := range insts {
			byID[inst.ID] = inst
		}
		var det struct {
			Description string `json:"description"`
			Weight      int    `json:"weight"`
		}
		j1 := byID["j-1"]
		if err := j1.DecodePayload(&det); err != nil || det.Description != "java service" || det.Weight != 4 ||
			j1.PayloadClass() != "Discovery$Details" || j1.Address != "10.3.0.1" || j1.Port != 7001 ||
			j1.ServiceType != discovery.Dynamic || j1.RegistrationTime.UnixMilli() != 1700000000001 || j1.Disabled {
			t.Fatalf("j-1 read as %+v (payload %+v, %v)", j1, det, err)
		}
		var zone struct {
			Zone string `json:"zone"`
			IDs  []int  `json:"ids"`
		}
		j2 := byID["j-2"]
		if err := j2.DecodePayload(&zone); err != nil || zone.Zone != "c" || len(zone.IDs) != 2 || j2.SSLPort != 7443 ||
			j2.PayloadClass() != "java.util.LinkedHashMap" {
			t.Fatalf("j-2 read as %+v (payload %+v, %v)", j2, zone, err)
		}
		var n int64
		j3 := byID["j-3"]
		if err := j3.DecodePayload(&n); err != nil || n != 12345678901 || j3.ServiceType != discovery.Static || j3.Port != 0 {
			t.Fatalf("j-3 read as %+v (payload %d, %v)", j3, n, err)
		}
		var text string
		j4 := byID["j-4"]
		if err := j4.DecodePayload(&text); err != nil || text != "text" || j4.ServiceType != discovery.Permanent ||
			j4.URISpec.Build(j4, nil) != "http://10.3.0.4:" {
			t.Fatalf("j-4 read as %+v (payload %q, %v, uri %q)", j4, text, err, j4.URISpec.Build(j4, nil))
		}
		one, err := d.Instance(ctx, "web", "w-1")
		if err != nil || one.Address != "10.3.0.9" {
			t.Fatalf("Instance(web, w-1) = %+v, %v", one, err)
		}

		// Go's Provider follows Curator's changes.
		prov, err := d.NewProvider("api")
		if err != nil {
			t.Fatal(err)
		}
		changes := prov.Watch(ctx)
		defer func() {
			changes.Stop()
			for range changes.C {
			}
		}()
		waitGo := func(want string) []discovery.Instance {
			t.Helper()
			for {
				all := prov.Instances()
				var ids []string
				for _, i := range all {
					ids = append(ids, i.ID)
				}
				sort.Strings(ids)
				if strings.Join(ids, " ") == want {
					return all
				}
				select {
				case _, ok := <-changes.C: // the load, or a change
					if !ok {
						t.Fatalf("Go provider stopped with %v, want %s: %v", ids, want, changes.Err())
					}
				case <-ctx.Done():
					t.Fatalf("Go provider has %v, want %s", ids, want)
				}
			}
		}
		waitGo("j-1 j-2 j-3 j-4")
		upd := "base=" + base + " mode=full name=api id=j-1 address=10.3.0.1 port=7009 time=1700000000001 payload=details:" + b64("java service") + ",4"
		if _, err := p.Do(ctx, "update "+upd+" enabled=false"); err != nil {
			t.Fatal(err)
		}
		waitGo("j-2 j-3 j-4")
		if _, err := p.Do(ctx, "update "+upd+" enabled=true"); err != nil {
			t.Fatal(err)
		}
		all := waitGo("j-1 j-2 j-3 j-4")
		if all[0].Port != 7009 {
			t.Fatalf("Go provider read the updated j-1 as %+v", all[0])
		}
		if _, err := p.Do(ctx, "unregister base="+base+" name=api id=j-2"); err != nil {
			t.Fatal(err)
		}
		waitGo("j-1 j-3 j-4")

		// Curator's session expires: its dynamic instance goes, and comes back
		// when Curator registers it again on its new session; Go follows.
		old := p.SessionID
		if err := link.ExpireSession(ctx, old); err != nil {
			t.Fatal(err)
		}
		waitGo("j-1 j-3 j-4")
		var sid int64
		for {
			out, err := p.Do(ctx, "session")
			if err != nil {
				t.Fatal(err)
			}
			id, _ := strconv.ParseUint(out, 16, 64)
			if sid = int64(id); sid != old && sid != 0 {
				// Curator registers again on RECONNECTED: j-1's node is its
				// new session's.
				_, st, err := s.Conn().Get(base + "/api/j-1")
				if err == nil && st.EphemeralOwner == sid {
					break
				}
			}
			select {
			case <-ctx.Done():
				t.Fatalf("Curator's j-1 not registered on its new session (0x%x, was 0x%x)", sid, old)
			case <-time.After(50 * time.Millisecond):
			}
		}
		all = waitGo("j-1 j-3 j-4")
		if all[0].Port != 7009 {
			t.Fatalf("j-1 after Curator's re-registration: %+v", all[0])
		}
	})
}
