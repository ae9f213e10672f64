package driver

import (
	"time"

	"github.com/oltplab/oltplab/internal/tpcc"
)

// terminal is one emulated user: its random stream, its tpcc.Terminal
// (deck and inputs), in AllWarehouses the warehouses it moves across, and
// in the paced modes its place on the schedule. Whoever holds a terminal
// owns it: a virtual user its own, in the tpc-c mode the pacer while the
// terminal keys and thinks and one pooled session while its transaction
// runs. It holds no session and no histogram, so that thousands are cheap.
type terminal struct {
	id         int
	rand       *tpcc.Rand
	term       *tpcc.Terminal
	warehouses []int // AllWarehouses: the warehouses it moves across; nil when bound to home

	// Paced modes.
	kind       tpcc.TxKind // the transaction chosen from the menu, to run at due
	due        time.Time   // intended start: the end of keying, or the rate's schedule
	dispatched time.Time   // tpc-c: when the pacer handed it to the session pool
	index      int         // tpc-c: position in the pacer's heap
}

// assignment returns the home warehouse, the fixed Stock-Level district
// (TPC-C 2.8.1.1) and, with all, the warehouses of user i (from 0) of
// users over a database of w warehouses. Users sharing a home warehouse
// get different districts, as HammerDB does; with ten users per warehouse
// that is the terminal population of TPC-C 4.2.2, each terminal of a
// warehouse with a district of its own.
func assignment(i, users, w int, all bool) (home, district int, list []int) {
	home = i%w + 1
	district = (i/w)%tpcc.DistrictsPerWarehouse + 1
	if all && users < w {
		// HammerDB "use all warehouses": user i drives w' with (w'-1) % users == i.
		for wh := i + 1; wh <= w; wh += users {
			list = append(list, wh)
		}
	}
	return home, district, list
}

// newTerminal returns user i of users, drawing from its own stream of
// seed (tpcc.TerminalStream) with the run-time constants run.
func newTerminal(i, users int, seed uint64, run tpcc.Constants, warehouses int, all bool) *terminal {
	r := tpcc.NewRand(seed, tpcc.TerminalStream(i))
	home, district, list := assignment(i, users, warehouses, all)
	return &terminal{
		id:         i,
		rand:       r,
		term:       tpcc.NewTerminal(r, run, warehouses, home, district),
		warehouses: list,
	}
}

// newUserTerminal is virtual user i of a tproc-c run. With a shard it is
// user FirstVU+i of the whole run: its own stream, its home in the
// shard's warehouses.
func newUserTerminal(i int, o Options, run tpcc.Constants, warehouses int) *terminal {
	if !o.Shard.Active() {
		return newTerminal(i, o.VUs, o.Seed, run, warehouses, o.AllWarehouses)
	}
	r := tpcc.NewRand(o.Seed, tpcc.TerminalStream(o.Shard.FirstVU+i))
	home, district, list := assignment(i, o.VUs, o.Shard.warehouses(), o.AllWarehouses)
	first := o.Shard.FirstWarehouse
	home += first - 1
	for k := range list {
		list[k] += first - 1
	}
	return &terminal{id: i, rand: r, term: tpcc.NewTerminal(r, run, warehouses, home, district), warehouses: list}
}

// pickWarehouse moves a terminal of AllWarehouses to the warehouse of its
// next transaction, chosen uniformly among its own.
func (t *terminal) pickWarehouse() {
	switch len(t.warehouses) {
	case 0:
	case 1:
		t.term.SetWarehouse(t.warehouses[0])
	default:
		t.term.SetWarehouse(t.warehouses[t.rand.Uniform(0, len(t.warehouses)-1)])
	}
}
