package checkers

import (
	"time"

	"github.com/zkrecipes/zkrecipes/chaos/history"
)

// dhb builds discovery histories: registrant r, providers p and q; times
// are milliseconds after start; the bound of the cases is 20 ms.
type dhb struct{ *hb }

func newDHB(endMS int64) dhb { return dhb{newHB(endMS)} }

const discBound = 20 * time.Millisecond

// reg records a register (fn FnRegister), update or unregister of id
// from call to ret (ret < 0: unknown outcome).
func (b dhb) reg(fn history.Fn, id string, version, call, ret int64) dhb {
	res := history.KindOK
	if ret < 0 {
		res, ret = history.KindUnknown, call
	}
	b.op("r", fn, id, version, 0, call, ret, res, id, 0)
	return b
}

// view records provider's view at t (detail as FormatInstances writes it).
func (b dhb) view(provider string, t int64, detail string) dhb {
	b.add(history.Event{Time: t * ms, Client: provider, Kind: history.KindProviderView, Key: "svc", Detail: detail})
	return b
}

func (b dhb) closed(provider string, t int64) dhb {
	b.add(history.Event{Time: t * ms, Client: provider, Kind: history.KindProviderView, Key: "svc", Mode: history.ProviderClosed})
	return b
}

func (b dhb) session(client string, t int64, detail string) dhb {
	b.add(history.Event{Time: t * ms, Client: client, Kind: history.KindSession, Detail: detail})
	return b
}

// crash records that client abandoned its session at t, with timeout
// timeoutMS.
func (b dhb) crash(client string, t, timeoutMS int64) dhb {
	b.add(history.Event{Time: t * ms, Client: client, Kind: history.KindCrash, Fn: history.FnRegister, Key: "svc", Value: timeoutMS * ms})
	return b
}

func (b dhb) fault(name string, from, to int64) dhb { b.hb.fault(name, from, to); return b }

// basic: a registered at 0..2, updated to 2 at 10..12, unregistered at
// 30..32; b registered at 40..42.
func discBasic() dhb {
	return newDHB(100).reg(history.FnRegister, "a", 1, 0, 2).reg(history.FnUpdateInstance, "a", 2, 10, 12).
		reg(history.FnUnregister, "a", 0, 30, 32).reg(history.FnRegister, "b", 1, 40, 42)
}

func discoveryCases() []checkerCase {
	dc := DiscoveryConverges(discBound)
	return []checkerCase{
		{"discovery: views follow", dc,
			discBasic().view("p", 1, "").view("p", 3, "a=1").view("p", 13, "a=2").view("p", 33, "").view("p", 45, "b=1").
				view("q", 0, "").view("q", 20, "a=2").view("q", 50, "b=1").build(), 0, ""},
		{"discovery: a view misses an update", dc,
			discBasic().view("p", 1, "").view("p", 3, "a=1").view("p", 33, "").view("p", 45, "b=1").build(), 1, "a version 1 at 32ms; 20ms after its registrant r it must be version 2"},
		{"discovery: a view misses a registration", dc,
			discBasic().view("p", 1, "").view("p", 3, "a=1").view("p", 13, "a=2").view("p", 33, "").build(), 1, "b absent"},
		{"discovery: a view keeps an unregistered instance", dc,
			discBasic().view("p", 1, "").view("p", 3, "a=1").view("p", 13, "a=2").view("p", 45, "a=2,b=1").build(), 1, "must be absent (its unregister"},
		{"discovery: an update of unknown outcome may show or not", dc,
			newDHB(100).reg(history.FnRegister, "a", 1, 0, 2).reg(history.FnUpdateInstance, "a", 2, 10, -1).
				view("p", 1, "").view("p", 3, "a=1").view("q", 1, "").view("q", 3, "a=1").view("q", 15, "a=2").build(), 0, ""},
		{"discovery: an invented version", dc,
			newDHB(100).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "a=1").view("p", 3, "a=5").build(), 1, "nobody had registered"},
		{"discovery: a version seen before its register was invoked", dc,
			newDHB(100).reg(history.FnRegister, "a", 1, 10, 12).view("p", 5, "a=1").view("p", 15, "a=1").build(), 1, "nobody had registered"},
		{"discovery: stale during a fault, followed after its heal", dc,
			newDHB(100).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").fault("cut-short", 10, 60).view("p", 70, "a=1").build(), 0, ""},
		{"discovery: still stale B after the heal", dc,
			newDHB(100).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").fault("cut-short", 10, 60).view("p", 85, "a=1").build(), 1, "a absent at 80ms"},
		{"discovery: a suspended provider is not judged", dc,
			newDHB(100).reg(history.FnRegister, "a", 1, 10, 12).view("p", 1, "").session("p", 5, "suspended").build(), 0, ""},
		{"discovery: a provider reconnected is judged B later", dc,
			newDHB(100).reg(history.FnRegister, "a", 1, 10, 12).view("p", 1, "").session("p", 5, "suspended").session("p", 40, "connected").
				view("p", 70, "a=1").build(), 1, "a absent at 60ms"},
		{"discovery: a registrant's new session excuses its instances for B", dc,
			newDHB(100).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").view("p", 3, "a=1").session("r", 40, "new").
				view("p", 41, "").view("p", 55, "a=1").build(), 0, ""},
		{"discovery: a registrant's instance not back B after its new session", dc,
			newDHB(100).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").view("p", 3, "a=1").session("r", 40, "new").
				view("p", 41, "").build(), 1, "a absent at 60ms"},
		{"discovery: an abandoned session's instance goes after its expiry", dc,
			newDHB(150).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").view("p", 3, "a=1").crash("r", 20, 30).
				view("p", 60, "").build(), 0, ""},
		{"discovery: an abandoned session's instance listed past its expiry", dc,
			newDHB(150).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").view("p", 3, "a=1").crash("r", 20, 30).
				view("p", 75, "").build(), 1, "abandoned its session at 20ms and it expired by 50ms"},
		{"discovery: a fault during the wait delays the expiry", dc,
			newDHB(150).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").view("p", 3, "a=1").crash("r", 20, 30).
				fault("kill-leader", 40, 60).view("p", 100, "").build(), 0, ""},
		{"discovery: an instance registered again after an abandoned session may be absent meanwhile", dc,
			newDHB(150).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").view("p", 3, "a=1").crash("r", 20, 30).
				view("p", 50, "").reg(history.FnRegister, "a", 2, 60, 62).view("p", 63, "a=2").build(), 0, ""},
		{"discovery: an instance registered again after an abandoned session must show", dc,
			newDHB(150).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").view("p", 3, "a=1").crash("r", 20, 30).
				view("p", 50, "").reg(history.FnRegister, "a", 2, 60, 62).build(), 1, "a absent at 82ms"},
		{"discovery: an instance replaced on a new session before the old one may expire is never absent", dc,
			newDHB(150).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").view("p", 3, "a=1").crash("r", 20, 60).
				reg(history.FnRegister, "a", 2, 30, 32).view("p", 33, "").view("p", 35, "a=2").build(), 1, "a absent at 33ms"},
		{"discovery: a fault on client links does not delay the expiry", dc,
			newDHB(150).reg(history.FnRegister, "a", 1, 0, 2).view("p", 1, "").view("p", 3, "a=1").crash("r", 20, 30).
				fault("cut-short", 40, 45).view("p", 100, "").build(), 1, "abandoned its session at 20ms and it expired by 50ms"},
		{"discovery: views end when the provider closes", dc,
			discBasic().view("p", 1, "").view("p", 3, "a=1").closed("p", 5).build(), 0, ""},
	}
}
