package spec

import (
	"slices"
	"strings"
	"testing"
)

func TestTableIsValid(t *testing.T) {
	if err := Validate(Table); err != nil {
		t.Fatalf("the lifecycle table is invalid:\n%v", err)
	}
	r := Reachable(Table)
	t.Logf("%d rows; %d reachable records per pod", len(Table), len(r.Records))
}

// TestEveryPairHasOneOutcome enumerates every (state, event) pair and every
// valuation of what its guards read: exactly one row fires, or, only for
// events the worker raises itself, none does and the machine rejects it.
func TestEveryPairHasOneOutcome(t *testing.T) {
	pairs, rejectedPairs := map[[2]int]bool{}, map[[2]int]bool{}
	PodSchema.EachValuation(Table, func(s State, e Event, n int, valuation string) {
		pairs[[2]int{int(s), int(e)}] = true
		switch {
		case n > 1:
			t.Fatalf("(%s, %s): %d rows fire with %s", s, e, n, valuation)
		case n == 0 && e.Info().Total:
			t.Fatalf("(%s, %s): no row fires with %s", s, e, valuation)
		case n == 0:
			rejectedPairs[[2]int{int(s), int(e)}] = true
		}
	})
	t.Logf("%d (state, event) pairs; %d of them reject some input (worker events only)", len(pairs), len(rejectedPairs))
}

// brokenCopy returns a copy of the table with edit applied.
func brokenCopy(edit func(rows []Row) []Row) []Row {
	rows := slices.Clone(Table)
	for i := range rows {
		rows[i].Set = slices.Clone(rows[i].Set)
	}
	return edit(rows)
}

func find(rows []Row, id string) int {
	i := RowIndex(rows, id)
	if i < 0 {
		panic("no row " + id)
	}
	return i
}

func TestValidateRejectsBrokenTables(t *testing.T) {
	tests := []struct {
		name string
		edit func([]Row) []Row
		want string
	}{
		{"overlapping guards", func(rows []Row) []Row {
			rows[find(rows, "WaitingDequeuePark")].Guard = queuedAndIdle
			return rows
		}, "can both fire"},
		{"missing outcome for an outside event", func(rows []Row) []Row {
			return slices.Delete(rows, find(rows, "RunningCreate"), find(rows, "RunningCreate")+1)
		}, "(Running, Create): no row fires"},
		{"pair with no rows at all", func(rows []Row) []Row {
			i := find(rows, "FinishedRequeueIgnored")
			return slices.Delete(rows, i, i+1)
		}, "(Finished, Requeue): no row"},
		{"write outside the domain", func(rows []Row) []Row {
			r := &rows[find(rows, "RunningKillTerminate")]
			for i, a := range r.Set {
				if a.Var == Grace {
					r.Set[i].Value = P(PGraceOverride) // may be -1
				}
			}
			return rows
		}, "outside Grace"},
		{"a UID without a record changed but not created", func(rows []Row) []Row {
			r := &rows[find(rows, "AbsentSyncKnownPodsIgnored")]
			r.Set = []Assign{setTrue(Deleted)}
			return rows
		}, "changes a UID that has no record"},
		{"a guard that reads a shell variable", func(rows []Row) []Row {
			r := &rows[find(rows, "RunningDequeueSync")]
			r.Guard = And(r.Guard, Not(V(Loop)))
			return rows
		}, "only properties may"},
		{"a removal that keeps the variables", func(rows []Row) []Row {
			rows[find(rows, "FinishedSyncKnownPodsRemove")].Reset = false
			return rows
		}, "removes the record without resetting it"},
		{"unreachable state", func(rows []Row) []Row {
			return slices.DeleteFunc(rows, func(r Row) bool { return r.To == Finished && r.From != Finished })
		}, "state Finished cannot be reached"},
		{"duplicate row ID", func(rows []Row) []Row {
			rows[1].ID = rows[0].ID
			return rows
		}, "duplicate ID"},
		{"parameter the event does not carry", func(rows []Row) []Row {
			r := &rows[find(rows, "RunningSyncPodDone")]
			r.Guard = And(r.Guard, P(POrphan))
			return rows
		}, "reads parameter Orphan"},
		{"removal that keeps variables", func(rows []Row) []Row {
			rows[find(rows, "FinishedSyncKnownPodsRemove")].Reset = false
			return rows
		}, "without resetting"},
		{"variable written twice", func(rows []Row) []Row {
			r := &rows[find(rows, "RunningSyncPodDone")]
			r.Set = append(r.Set, SetEnum(InFlight, "SyncPod"))
			return rows
		}, "writes InFlight twice"},
		{"queued update not taken", func(rows []Row) []Row {
			rows[find(rows, "RunningUpdate")].Effects &^= TakeUpdate
			return rows
		}, "TakeUpdate must mark"},
		{"ill-typed guard", func(rows []Row) []Row {
			rows[find(rows, "RunningSyncPodDone")].Guard = V(Grace)
			return rows
		}, "is not Bool"},
		{"waiters dropped without closing them", func(rows []Row) []Row {
			rows[find(rows, "TerminatingTerminatingDone")].Effects &^= CloseWaiters
			return rows
		}, "clears Waiters without CloseWaiters"},
		{"sync put in flight without Start", func(rows []Row) []Row {
			rows[find(rows, "RunningDequeueSync")].Effects &^= Start
			return rows
		}, "puts a sync in flight = true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(brokenCopy(tt.edit))
			if err == nil {
				t.Fatalf("Validate accepted the broken table")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate did not report %q; it said:\n%v", tt.want, err)
			}
		})
	}
}

func TestHashFollowsTheTable(t *testing.T) {
	changed := brokenCopy(func(rows []Row) []Row {
		rows[0].Doc = "docs do not count"
		return rows
	})
	if Hash(changed) != Hash(Table) {
		t.Errorf("a doc-only change altered the hash")
	}
	changed[find(changed, "RunningSyncPodDone")].Effects |= Cancel
	if Hash(changed) == Hash(Table) {
		t.Errorf("an effect change did not alter the hash")
	}
}
