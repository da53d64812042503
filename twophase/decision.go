package twophase

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/zkrecipes/zkrecipes/recipes"
)

// Decision is a vote or the outcome of a transaction: Commit or Abort. The
// zero value is neither (no vote, no decision yet).
type Decision int

const (
	// Commit: the site is prepared to commit (vote), or every site voted
	// commit and the transaction commits (decision).
	Commit Decision = 1
	// Abort: the site refuses (vote), or the transaction aborts (decision).
	Abort Decision = 2
)

func (d Decision) String() string {
	switch d {
	case Commit:
		return "commit"
	case Abort:
		return "abort"
	case 0:
		return "none"
	}
	return fmt.Sprintf("decision(%d)", int(d))
}

func (d Decision) valid() bool { return d == Commit || d == Abort }

// Names of the nodes under <root>/<tx>. The decision is a sibling of the
// site nodes, so "decision" cannot be a site name.
const (
	decisionNode = "decision"
	aliveNode    = "alive"
	voteNode     = "vote"
	doneNode     = "done"
)

// The layout's fixed node names, exported for tools that read a root
// (see the package doc's Layout).
const (
	DecisionName = decisionNode // <root>/<tx>/decision
	AliveName    = aliveNode    // <root>/<tx>/<site>/alive, ephemeral
	VoteName     = voteNode     // <root>/<tx>/<site>/vote
	DoneName     = doneNode     // <root>/<tx>/<site>/done
)

// encodeDecision returns the data of a vote node (reason empty) or of the
// decision node: "commit" or "abort", then optionally "\n" and a reason.
// Pure.
func encodeDecision(d Decision, reason string) []byte {
	b := []byte(d.String())
	if reason != "" {
		b = append(b, '\n')
		b = append(b, reason...)
	}
	return b
}

// parseDecision reads data written by encodeDecision. Anything else wraps
// ErrCorrupt. Pure.
func parseDecision(data []byte) (Decision, string, error) {
	head, reason, _ := bytes.Cut(data, []byte{'\n'})
	switch string(head) {
	case "commit":
		return Commit, string(reason), nil
	case "abort":
		return Abort, string(reason), nil
	}
	return 0, "", fmt.Errorf("%w: %q", ErrCorrupt, truncate(data, 32))
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// validateName checks that name is usable as one path segment (a
// transaction id or a site): non-empty, no "/", not "." or "..", and only
// characters ZooKeeper accepts. Pure.
func validateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty")
	case strings.Contains(name, "/"):
		return fmt.Errorf("%q contains '/'", name)
	}
	if err := recipes.ValidatePath("/" + name); err != nil {
		return fmt.Errorf("%q: %w", name, err)
	}
	return nil
}

func validateTxID(tx string) error {
	if err := validateName(tx); err != nil {
		return fmt.Errorf("%w: %w", ErrBadTxID, err)
	}
	return nil
}

func validateSite(site string) error {
	if err := validateName(site); err != nil {
		return fmt.Errorf("%w: %w", ErrBadSite, err)
	}
	if site == decisionNode {
		return fmt.Errorf("%w: %q is reserved", ErrBadSite, site)
	}
	return nil
}

// normalizeSites validates sites and returns them sorted, as stored. Pure.
func normalizeSites(sites []string) ([]string, error) {
	if len(sites) == 0 {
		return nil, fmt.Errorf("%w: no sites", ErrBadSite)
	}
	out := slices.Clone(sites)
	slices.Sort(out)
	for i, s := range out {
		if err := validateSite(s); err != nil {
			return nil, err
		}
		if i > 0 && out[i-1] == s {
			return nil, fmt.Errorf("%w: %q named twice", ErrBadSite, s)
		}
	}
	return out, nil
}

// siteView is what the coordinator knows of one site while it waits.
type siteView struct {
	Name string
	Vote Decision // 0 while the site has not voted
	// Vanished: the site's liveness node existed and is gone while the
	// site has not voted.
	Vanished bool
}

// rule is the coordinator's decision rule, applied to what it has seen so
// far; expired says the vote deadline has passed. It returns done=false
// while the outcome is still open. Pure.
//
//   - any abort vote: Abort;
//   - a site whose liveness vanished before it voted: Abort;
//   - every site voted commit: Commit (the only way to Commit);
//   - deadline passed with votes missing: Abort;
//   - otherwise: keep waiting.
func rule(sites []siteView, expired bool) (d Decision, reason string, done bool) {
	if len(sites) == 0 {
		return Abort, "no sites", true
	}
	var missing []string
	for _, s := range sites {
		switch {
		case s.Vote == Abort:
			return Abort, fmt.Sprintf("site %s voted abort", s.Name), true
		case s.Vote == Commit:
		case s.Vanished:
			return Abort, fmt.Sprintf("site %s lost its liveness node before voting", s.Name), true
		default:
			missing = append(missing, s.Name)
		}
	}
	if len(missing) == 0 {
		return Commit, "", true
	}
	if expired {
		return Abort, fmt.Sprintf("vote deadline passed without votes from %s", strings.Join(missing, ", ")), true
	}
	return 0, "", false
}
