package recipes

import "testing"

// FakeServer starts a fake ZooKeeper server (fakeZK) for the external
// tests of this package, closed at the end of the test. It returns the
// server's address and a function counting the requests sent to it after
// the handshakes, pings excepted.
func FakeServer(t *testing.T) (addr string, sent func() int) {
	f := newFakeZK(t, nil)
	f.timeout = 40000 // long enough for a lease
	return f.addr(), func() int {
		n := 0
		for _, r := range f.requests() {
			n += len(r)
		}
		return n
	}
}
