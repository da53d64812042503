package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Data shown per node in text output, in runes (JSON has it all): the
// default table cuts it short to stay narrow, the wide one shows more.
const (
	maxDataText = 24
	maxDataWide = 120
)

// TextOptions tune WriteText.
type TextOptions struct {
	// Wide shows full node names and paths and more of each node's data
	// (the command's -o wide); the default shortens names (see ShortName)
	// and data so that a row fits about 80 columns.
	Wide bool
}

// WriteJSON writes rep (a *Report) as one JSON document followed by a newline.
func WriteJSON(w io.Writer, rep any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteText writes rep for a terminal: a heading line, how the owners'
// liveness was learned, then the layout's nodes in order (holders first
// marked "holds", then "waits"), then stale nodes and foreign children.
func WriteText(w io.Writer, rep *Report, o TextOptions) error {
	var b strings.Builder
	head := fmt.Sprintf("%s  %s", rep.Path, rep.Kind)
	if rep.Dialect != "" {
		head += " (" + rep.Dialect + ")"
	}
	fmt.Fprintf(&b, "%s  at %s\n", head, rep.At.UTC().Format(time.RFC3339))
	sessions(&b, rep.Sessions)
	name := func(n string) string {
		if o.Wide {
			return n
		}
		return ShortName(n)
	}
	switch rep.Kind {
	case KindAbsent:
		b.WriteString("the path does not exist\n")
	case KindEmpty:
		b.WriteString("no children: a set barrier.Barrier, or a recipe path nobody uses now\n")
	case KindLock, KindRWLock:
		section(&b, fmt.Sprintf("contenders: %d", len(rep.Contenders)), rep.Contenders, true, o)
	case KindElection:
		if rep.Leader != nil {
			fmt.Fprintf(&b, "leader: %s (%s)\n", rep.Leader.Data, name(rep.Leader.Name))
		} else {
			b.WriteString("leader: none\n")
		}
		section(&b, fmt.Sprintf("participants: %d", len(rep.Contenders)), rep.Contenders, true, o)
	case KindSemaphore:
		max := "not recorded"
		if rep.Max > 0 {
			max = strconv.Itoa(rep.Max)
		}
		section(&b, fmt.Sprintf("leases: %d of max %s", len(rep.Leases), max), rep.Leases, false, o)
		section(&b, fmt.Sprintf("acquirers queued on the mutex: %d", len(rep.Contenders)), rep.Contenders, true, o)
	case KindQueue:
		fmt.Fprintf(&b, "depth: %d\n", rep.Depth)
		if len(rep.Items) > 0 {
			it := rep.Items[0]
			fmt.Fprintf(&b, "oldest: %s, age %s, data %s\n", it.Name, it.Age, short(it.Data, o))
		}
		section(&b, fmt.Sprintf("items: %d shown", len(rep.Items)), rep.Items, false, o)
		section(&b, fmt.Sprintf("claims: %d", len(rep.Claims)), rep.Claims, false, o)
	case KindDoubleBarrier:
		fmt.Fprintf(&b, "ready: %v\n", rep.Ready)
		section(&b, fmt.Sprintf("members: %d", len(rep.Members)), rep.Members, false, o)
	case KindTwoPhase:
		txs(&b, rep.Transactions, o)
	case KindUnknown:
		b.WriteString("not a recipe this command recognises\n")
	}
	if rep.Truncated {
		b.WriteString("(lists truncated: see -max)\n")
	}
	if len(rep.Stale) > 0 {
		b.WriteString("stale:\n")
		for _, f := range rep.Stale {
			p := f.Path
			if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(rep.Path, "/")+"/"); ok && !o.Wide {
				dir, last := "", rel
				if i := strings.LastIndex(rel, "/"); i >= 0 {
					dir, last = rel[:i+1], rel[i+1:]
				}
				p = dir + ShortName(last)
			}
			fmt.Fprintf(&b, "  %s: %s\n", p, f.Why)
		}
	}
	if len(rep.Foreign) > 0 {
		fmt.Fprintf(&b, "foreign children: %s\n", strings.Join(rep.Foreign, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sessions writes how the owners' liveness was learned.
func sessions(b *strings.Builder, s SessionInfo) {
	switch {
	case s.Known && s.Members == 1:
		fmt.Fprintf(b, "sessions: %d connected to the server\n", s.Connected)
	case s.Known:
		fmt.Fprintf(b, "sessions: %d connected to the %d servers of the ensemble\n", s.Connected, s.Members)
	case s.Why == "":
	case s.Connected == 0 && s.Asked == 0 && len(s.Missing) == 0:
		fmt.Fprintf(b, "sessions: liveness unknown: %s\n", s.Why)
	default:
		fmt.Fprintf(b, "sessions: %d listed by the servers asked; an owner none listed is \"unknown\": %s\n", s.Connected, s.Why)
		for _, m := range s.Missing {
			fmt.Fprintf(b, "  %s\n", m)
		}
	}
}

// section writes a table of nodes under a title; states adds the holds /
// waits column.
func section(b *strings.Builder, title string, ns []Node, states bool, o TextOptions) {
	b.WriteString(title + "\n")
	if len(ns) == 0 {
		return
	}
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.Name
	}
	if !o.Wide {
		names = ShortNames(names)
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	if states {
		fmt.Fprintln(tw, "  #\tstate\tnode\tsession\tage\tdata")
	} else {
		fmt.Fprintln(tw, "  #\tnode\tsession\tage\tdata")
	}
	for i, n := range ns {
		sess := n.Session
		switch {
		case sess == "":
			sess = "-"
		case n.Liveness == "disconnected":
			sess += " (disconnected)"
		case n.Liveness == "unknown":
			sess += " (unknown)"
		}
		age := n.Age.String()
		if n.Gone {
			age = "gone"
		}
		if states {
			state := "waits"
			if n.Holds {
				state = "holds"
			}
			if n.Role != "" && n.Role != "lock" && n.Role != "latch" {
				state += " " + n.Role
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\n", i+1, state, names[i], sess, age, short(n.Data, o))
		} else {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\n", i+1, names[i], sess, age, short(n.Data, o))
		}
	}
	_ = tw.Flush()
}

// ShortName shortens a node name for the default table by dropping what
// tells a client its own node but an operator nothing: Curator's
// protection prefix "_c_<uuid36>-" and kazoo's "<uuid hex32>" before a
// label ("_c_b845...-lock-0000000000" is "lock-0000000000", unique in its
// parent since sequence numbers are); a name that is only a GUID (a
// barrier member, a kazoo lease) is cut to its first 8 characters and
// "…". Other names are returned as they are. Pure.
func ShortName(name string) string {
	if rest, ok := strings.CutPrefix(name, "_c_"); ok && len(rest) > 37 && rest[36] == '-' && isUUID(rest[:36]) {
		return rest[37:]
	}
	if len(name) > 34 && isHex(name[:32]) && strings.HasPrefix(name[32:], "__") {
		return name[32:]
	}
	if (len(name) == 36 && isUUID(name)) || (len(name) == 32 && isHex(name)) {
		return name[:8] + "…"
	}
	return name
}

// ShortNames returns ShortName of each name, or the names as they are
// when two short names would be the same. Pure.
func ShortNames(names []string) []string {
	out := make([]string, len(names))
	seen := map[string]bool{}
	for i, n := range names {
		out[i] = ShortName(n)
		if seen[out[i]] {
			return slices.Clone(names)
		}
		seen[out[i]] = true
	}
	return out
}

func isHex(s string) bool {
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return s != ""
}

// isUUID reports whether s is "8-4-4-4-12" hex digits.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for _, i := range []int{8, 13, 18, 23} {
		if s[i] != '-' {
			return false
		}
	}
	return isHex(s[:8]) && isHex(s[9:13]) && isHex(s[14:18]) && isHex(s[19:23]) && isHex(s[24:])
}

func txs(b *strings.Builder, ts []Tx, o TextOptions) {
	fmt.Fprintf(b, "transactions: %d\n", len(ts))
	for _, t := range ts {
		dec := "undecided"
		if t.Decision != "" {
			dec = "decided " + strings.ReplaceAll(t.Decision, "\n", ": ")
		}
		fmt.Fprintf(b, "  %s  %s  age %s  payload %s\n", t.ID, dec, t.Age, short(t.Payload, o))
		for _, s := range t.Sites {
			vote := s.Vote
			if vote == "" {
				vote = "no vote"
			}
			alive := "no session"
			if s.Alive != "" {
				alive = "session " + s.Alive
			}
			done := ""
			if s.Done {
				done = ", done"
			}
			fmt.Fprintf(b, "    %s: %s, %s%s\n", s.Name, vote, alive, done)
		}
	}
}

// short quotes data for a table cell, cut to maxDataText runes
// (maxDataWide with o.Wide).
func short(s string, o TextOptions) string {
	if s == "" {
		return "-"
	}
	limit := maxDataText
	if o.Wide {
		limit = maxDataWide
	}
	r := []rune(s)
	if len(r) > limit {
		s = string(r[:limit]) + "..."
	}
	return strconv.Quote(s)
}
