package checkers

import "github.com/zkrecipes/zkrecipes/chaos/history"

// cacheEvent records a cache event of client on p at t ms (mzxid 0 for a
// removal).
func (b *hb) cacheEvent(client, p, typ string, t, mzxid int64) *hb {
	return b.add(history.Event{Time: t * ms, Client: client, Kind: history.KindCacheEvent, Key: p, Detail: typ, Value: mzxid})
}

// converge records round r of client's cache from call to ret.
func (b *hb) converge(client string, r, call, ret int64, res history.Kind) *hb {
	return b.op(client, history.FnConverge, "/tree", r, 0, call, ret, res, "/tree", 0)
}

func cacheCases() []checkerCase {
	return []checkerCase{
		{"cache: rounds converge, mzxid grows", CacheConverges(),
			newHB(100).cacheEvent("c1", "/tree/a", "added", 1, 5).cacheEvent("c1", "/tree/a", "updated", 2, 7).
				cacheEvent("c1", "/tree/a", "removed", 3, 0).cacheEvent("c1", "/tree/a", "added", 4, 9).
				cacheEvent("c2", "/tree/a", "added", 5, 9).converge("c1", 1, 10, 20, history.KindOK).build(), 0, ""},
		{"cache: a round in quiet time that did not converge", CacheConverges(),
			newHB(100).fault("half-open", 0, 10).converge("c1", 1, 20, 40, history.KindFail).build(), 1, "did not converge"},
		{"cache: a round invoked before a fault healed is not judged", CacheConverges(),
			newHB(100).fault("half-open", 5, 25).converge("c1", 1, 20, 40, history.KindFail).converge("c1", 2, 60, 70, history.KindOK).build(), 0, ""},
		{"cache: a round whose wait a fault began in is not judged", CacheConverges(),
			newHB(100).fault("half-open", 35, 50).converge("c1", 1, 20, 40, history.KindFail).converge("c1", 2, 60, 70, history.KindOK).build(), 0, ""},
		{"cache: an update that goes back", CacheConverges(),
			newHB(100).cacheEvent("c1", "/tree/a", "added", 1, 5).cacheEvent("c1", "/tree/a", "updated", 2, 7).
				cacheEvent("c1", "/tree/a", "updated", 3, 6).build(), 1, "went back"},
		{"cache: an incarnation added again at an old mzxid after a reset", CacheConverges(),
			newHB(100).cacheEvent("c1", "/tree/a", "added", 1, 8).cacheEvent("c1", "", "reset", 2, 0).
				cacheEvent("c1", "/tree/a", "removed", 3, 0).cacheEvent("c1", "/tree/a", "added", 4, 8).build(), 1, "went back"},
	}
}
