package testenv

import (
	"sync/atomic"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// The limit-data-each fault is a toxic registered in-process with
// Toxiproxy, on the server-to-client stream: it closes each connection
// once the servers have sent it its own number of bytes, drawn for that
// connection. Toxiproxy's limit_data gives every connection the same
// number, and a client whose traffic repeats after each reconnection
// (connect, set watches, the same requests) is then cut at the same kind
// of frame every time: always a ping's reply, say, and never a create's.

const limitEachToxic = "zkrecipes_limit_data_each"

func init() {
	toxics.Register(limitEachToxic, new(limitDataEach))
}

// limitDataEach is the toxic: the k-th connection it sees (from 1, counted
// per toxic, that is per proxy) may receive Min + draw(Seed, k) % Spread
// bytes.
type limitDataEach struct {
	Min    int64  `json:"min"`
	Spread int64  `json:"spread"`
	Seed   uint64 `json:"seed"`
	seen   atomic.Uint64
}

// limitEachState is one connection's budget and what it has received.
type limitEachState struct{ limit, sent int64 }

func (t *limitDataEach) NewState() any {
	return &limitEachState{limit: limitFor(t.Min, t.Spread, t.Seed, t.seen.Add(1))}
}

// limitFor is the budget of the k-th connection: min plus a draw in
// [0, spread) (spread <= 0: min).
func limitFor(min, spread int64, seed, k uint64) int64 {
	if spread <= 0 {
		return min
	}
	// splitmix64 of seed and k: neighbouring connections get unrelated draws
	z := seed + k*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return min + int64(z%uint64(spread))
}

func (t *limitDataEach) Pipe(stub *toxics.ToxicStub) {
	st, _ := stub.State.(*limitEachState)
	if st == nil {
		st = &limitEachState{limit: t.Min}
	}
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if left := st.limit - st.sent; left < int64(len(c.Data)) {
				c = &stream.StreamChunk{Timestamp: c.Timestamp, Data: c.Data[:max(left, 0)]}
			}
			if len(c.Data) > 0 {
				stub.Output <- c
				st.sent += int64(len(c.Data))
			}
			if st.sent >= st.limit {
				stub.Close()
				return
			}
		}
	}
}
