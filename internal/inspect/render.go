package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// maxDataText bounds the data shown per node in text output (JSON has it
// all).
const maxDataText = 48

// WriteJSON writes rep (a *Report) as one JSON document followed by a newline.
func WriteJSON(w io.Writer, rep any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteText writes rep for a terminal: a heading line, then the layout's
// nodes in order (holders first marked "holds", then "waits"), then stale
// nodes and foreign children.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	head := fmt.Sprintf("%s  %s", rep.Path, rep.Kind)
	if rep.Dialect != "" {
		head += " (" + rep.Dialect + ")"
	}
	fmt.Fprintf(&b, "%s  at %s\n", head, rep.At.UTC().Format(time.RFC3339))
	if rep.Sessions.Known {
		fmt.Fprintf(&b, "sessions: %d connected to the servers\n", rep.Sessions.Connected)
	} else if rep.Sessions.Why != "" {
		fmt.Fprintf(&b, "sessions: liveness unknown (%s)\n", rep.Sessions.Why)
	}
	switch rep.Kind {
	case KindAbsent:
		b.WriteString("the path does not exist\n")
	case KindEmpty:
		b.WriteString("no children: a set barrier.Barrier, or a recipe path nobody uses now\n")
	case KindLock, KindRWLock:
		section(&b, fmt.Sprintf("contenders: %d", len(rep.Contenders)), rep.Contenders, true)
	case KindElection:
		if rep.Leader != nil {
			fmt.Fprintf(&b, "leader: %s (%s)\n", rep.Leader.Data, rep.Leader.Name)
		} else {
			b.WriteString("leader: none\n")
		}
		section(&b, fmt.Sprintf("participants: %d", len(rep.Contenders)), rep.Contenders, true)
	case KindSemaphore:
		max := "not recorded"
		if rep.Max > 0 {
			max = strconv.Itoa(rep.Max)
		}
		section(&b, fmt.Sprintf("leases: %d of max %s", len(rep.Leases), max), rep.Leases, false)
		section(&b, fmt.Sprintf("acquirers queued on the mutex: %d", len(rep.Contenders)), rep.Contenders, true)
	case KindQueue:
		fmt.Fprintf(&b, "depth: %d\n", rep.Depth)
		if len(rep.Items) > 0 {
			it := rep.Items[0]
			fmt.Fprintf(&b, "oldest: %s, age %s, data %s\n", it.Name, it.Age, short(it.Data))
		}
		section(&b, fmt.Sprintf("items: %d shown", len(rep.Items)), rep.Items, false)
		section(&b, fmt.Sprintf("claims: %d", len(rep.Claims)), rep.Claims, false)
	case KindDoubleBarrier:
		fmt.Fprintf(&b, "ready: %v\n", rep.Ready)
		section(&b, fmt.Sprintf("members: %d", len(rep.Members)), rep.Members, false)
	case KindTwoPhase:
		txs(&b, rep.Transactions)
	case KindUnknown:
		b.WriteString("not a recipe this command recognises\n")
	}
	if rep.Truncated {
		b.WriteString("(lists truncated: see -max)\n")
	}
	if len(rep.Stale) > 0 {
		b.WriteString("stale:\n")
		for _, f := range rep.Stale {
			fmt.Fprintf(&b, "  %s: %s\n", f.Path, f.Why)
		}
	}
	if len(rep.Foreign) > 0 {
		fmt.Fprintf(&b, "foreign children: %s\n", strings.Join(rep.Foreign, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// section writes a table of nodes under a title; states adds the holds /
// waits column.
func section(b *strings.Builder, title string, ns []Node, states bool) {
	b.WriteString(title + "\n")
	if len(ns) == 0 {
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	if states {
		fmt.Fprintln(tw, "  #\tstate\tnode\tsession\tage\tdata")
	} else {
		fmt.Fprintln(tw, "  #\tnode\tsession\tage\tdata")
	}
	for i, n := range ns {
		sess := n.Session
		if sess == "" {
			sess = "-"
		} else if n.Live != nil && !*n.Live {
			sess += " (disconnected)"
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
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\n", i+1, state, n.Name, sess, age, short(n.Data))
		} else {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\n", i+1, n.Name, sess, age, short(n.Data))
		}
	}
	_ = tw.Flush()
}

func txs(b *strings.Builder, ts []Tx) {
	fmt.Fprintf(b, "transactions: %d\n", len(ts))
	for _, t := range ts {
		dec := "undecided"
		if t.Decision != "" {
			dec = "decided " + strings.ReplaceAll(t.Decision, "\n", ": ")
		}
		fmt.Fprintf(b, "  %s  %s  age %s  payload %s\n", t.ID, dec, t.Age, short(t.Payload))
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

// short quotes data for a table cell, cut to maxDataText runes.
func short(s string) string {
	if s == "" {
		return "-"
	}
	r := []rune(s)
	if len(r) > maxDataText {
		s = string(r[:maxDataText]) + "..."
	}
	return strconv.Quote(s)
}
