package inspect

import (
	"slices"
	"strings"

	"github.com/zkrecipes/zkrecipes/internal/zkpath"
	"github.com/zkrecipes/zkrecipes/twophase"
)

// isTwoPhase looks one and two levels down (at most MaxNodes children, and
// their sites) for a twophase transaction. Cost: 1 getChildren per child
// and per site, until one is found.
func (in *inspector) isTwoPhase(path string, children []string) (bool, error) {
	for _, c := range children[:min(len(children), in.o.max())] {
		tx := zkpath.Join(path, c)
		sites, _, err := in.children(tx)
		if err != nil {
			return false, err
		}
		grand := map[string][]string{}
		for _, s := range sites {
			if s == twophase.DecisionName {
				continue
			}
			if grand[s], _, err = in.children(zkpath.Join(tx, s)); err != nil {
				return false, err
			}
			if IsTransaction(sites, grand) {
				return true, nil
			}
		}
		if IsTransaction(sites, grand) {
			return true, nil
		}
	}
	return false, nil
}

// twophase reads every transaction (at most MaxNodes): its payload, its
// decision, and per site its liveness node, vote and done mark. An
// undecided transaction with a site that has neither a liveness node nor a
// vote is reported as stale: that site's participant session ended (or
// never started) before it voted, and the coordinator will abort it.
func (in *inspector) twophase(rep *Report, path string, txs []string) error {
	slices.Sort(txs)
	if len(txs) > in.o.max() {
		txs, rep.Truncated = txs[:in.o.max()], true
	}
	for _, id := range txs {
		txPath := zkpath.Join(path, id)
		n, err := in.node(txPath, "tx")
		if err != nil {
			return err
		}
		if n.Gone {
			continue
		}
		tx := Tx{ID: id, Payload: n.Data, Age: n.Age}
		sites, _, err := in.children(txPath)
		if err != nil {
			return err
		}
		slices.Sort(sites)
		for _, s := range sites {
			if s == twophase.DecisionName {
				d, err := in.node(zkpath.Join(txPath, s), "decision")
				if err != nil {
					return err
				}
				tx.Decision = d.Data
				continue
			}
			site, err := in.site(zkpath.Join(txPath, s))
			if err != nil {
				return err
			}
			tx.Sites = append(tx.Sites, site)
		}
		if tx.Decision == "" {
			for _, s := range tx.Sites {
				if s.Alive == "" && s.Vote == "" {
					rep.Stale = append(rep.Stale, Finding{Path: zkpath.Join(txPath, s.Name),
						Why: "undecided, and no live session works on this site nor has it voted"})
				}
			}
		}
		rep.Transactions = append(rep.Transactions, tx)
	}
	slices.SortStableFunc(rep.Transactions, func(a, b Tx) int {
		if (a.Decision == "") != (b.Decision == "") {
			if a.Decision == "" {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return nil
}

// site reads one site's nodes.
func (in *inspector) site(p string) (Site, error) {
	s := Site{Name: base(p)}
	names, _, err := in.children(p)
	if err != nil {
		return s, err
	}
	for _, name := range names {
		switch name {
		case twophase.AliveName:
			n, err := in.node(zkpath.Join(p, name), "alive")
			if err != nil {
				return s, err
			}
			s.Alive = n.Session
		case twophase.VoteName:
			n, err := in.node(zkpath.Join(p, name), "vote")
			if err != nil {
				return s, err
			}
			s.Vote = n.Data
		case twophase.DoneName:
			s.Done = true
		}
	}
	return s, nil
}
