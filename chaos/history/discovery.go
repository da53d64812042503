package history

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The event and the operations of the service discovery workload (see
// workloads.Discovery). A registrant's operations name the instance's id
// in Key and, for a register or an update, the version the instance's
// data carries in Arg: versions of one id only grow, across its
// registrations. A registrant that abandons its session, as a crashed
// process would (the session is not closed: it expires), records
// KindCrash with Fn FnRegister, Key the service, Value the session's
// negotiated timeout in nanoseconds: the server expires it, and deletes
// its instances, no later than about that long after.
const (
	// KindProviderView: what a discovery Provider (Client's) holds of the
	// service Key: Detail lists its instances with their versions
	// (FormatInstances), Value counts them. Recorded when the Provider
	// starts and at every change of its cache; in effect until the
	// client's next one. Mode ProviderClosed: the Provider was closed, no view
	// is in effect from then on.
	KindProviderView Kind = "provider-view"
	// FnRegister registers instance Key with data version Arg.
	FnRegister Fn = "register"
	// FnUpdateInstance replaces the data of registered instance Key with
	// version Arg.
	FnUpdateInstance Fn = "update-instance"
	// FnUnregister unregisters instance Key.
	FnUnregister Fn = "unregister"
	// FnQuery reads the instances of service Key from ZooKeeper (not from
	// a cache); ok Value = how many.
	FnQuery Fn = "query"
)

// ProviderClosed is the Mode of the KindProviderView event that ends a
// client's views.
const ProviderClosed = "closed"

// FormatInstances renders a view (instance id -> data version) as a
// KindProviderView's Detail: "id=version" joined by commas, sorted by id.
// Ids must not contain a comma.
func FormatInstances(view map[string]int64) string {
	ids := make([]string, 0, len(view))
	for id := range view {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id + "=" + strconv.FormatInt(view[id], 10)
	}
	return strings.Join(parts, ",")
}

// ParseInstances reads a Detail written by FormatInstances ("" is an
// empty view). An entry without "=<version>" after its id, or an id listed
// twice, is ErrMalformed.
func ParseInstances(detail string) (map[string]int64, error) {
	out := map[string]int64{}
	if detail == "" {
		return out, nil
	}
	for _, p := range strings.Split(detail, ",") {
		i := strings.LastIndex(p, "=")
		if i <= 0 {
			return nil, fmt.Errorf("%w: view entry %q", ErrMalformed, p)
		}
		v, err := strconv.ParseInt(p[i+1:], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: view entry %q: %v", ErrMalformed, p, err)
		}
		if _, dup := out[p[:i]]; dup {
			return nil, fmt.Errorf("%w: view lists %q twice", ErrMalformed, p[:i])
		}
		out[p[:i]] = v
	}
	return out, nil
}
