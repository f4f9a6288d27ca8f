package spec

import "fmt"

// Reach is the result of exploring one pod's record on its own: every
// (state, variables) value reachable from Absent when every event may occur
// with any parameters (world facts included), and which rows ever fired.
type Reach struct {
	Records []Snapshot      // every distinct (state, variables) value, in BFS order
	States  []int           // records per state
	Fired   map[string]bool // row IDs that fired at least once
	// EffectErrors lists rows whose effects disagree with what they do to a
	// reachable record.
	EffectErrors []string
}

// effectErrors checks a row's effects against its updates on one record.
func effectErrors(r *Row, before, after []int) []string {
	var errs []string
	put := before[VarIndex(InFlight)] == 0 && after[VarIndex(InFlight)] != 0
	if put != r.Effects.Has(Start) {
		errs = append(errs, fmt.Sprintf("row %s: has Start = %v but puts a sync in flight = %v", r.ID, r.Effects.Has(Start), put))
	}
	if before[VarIndex(Waiters)] == 1 && after[VarIndex(Waiters)] == 0 && !r.Effects.Has(CloseWaiters) {
		errs = append(errs, fmt.Sprintf("row %s: clears Waiters without CloseWaiters", r.ID))
	}
	if r.Effects.Has(CloseWaiters) && after[VarIndex(Waiters)] != 0 {
		errs = append(errs, fmt.Sprintf("row %s: has CloseWaiters but Waiters stays set", r.ID))
	}
	return errs
}

// Snapshot is one record value: a state and its variables, indexed like Vars.
type Snapshot struct {
	State State
	Vars  []int
}

// Reachable explores a table breadth-first from the empty record, with every
// parameter taking every value of its domain.
func Reachable(rows []Row) Reach { return PodSchema.Reachable(rows) }

// Reachable explores a table of sc's breadth-first from the empty record.
func (sc *Schema) Reachable(rows []Row) Reach {
	return sc.ReachableWith(rows, func(p *Param) []int { return p.Domain.Enumerate() })
}

// ReachableWith explores a table with each parameter limited to the values
// choices returns (the bounds of a model-checking configuration).
func ReachableWith(rows []Row, choices func(*Param) []int) Reach {
	return PodSchema.ReachableWith(rows, choices)
}

// ReachableWith explores a table of sc's with each parameter limited to
// the values choices returns.
func (sc *Schema) ReachableWith(rows []Row, choices func(*Param) []int) Reach {
	ix := sc.NewIndex(rows)
	key := func(s State, vars []int) string {
		b := make([]byte, 0, 1+len(vars))
		b = append(b, byte(s))
		for _, v := range vars {
			b = append(b, byte(v+8))
		}
		return string(b)
	}
	res := Reach{Fired: map[string]bool{}, States: make([]int, len(sc.StateNames))}
	seen, reported := map[string]bool{}, map[string]bool{}
	start := Snapshot{sc.Initial, make([]int, len(sc.Vars))}
	seen[key(start.State, start.Vars)] = true
	queue := []Snapshot{start}
	env := sc.NewEnv()
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		res.Records = append(res.Records, cur)
		res.States[cur.State]++
		for _, e := range sc.AllEvents() {
			rs := ix.Rows(cur.State, e)
			if len(rs) == 0 {
				continue
			}
			_, params := pairReads(rs, true)
			copy(env.Vars, cur.Vars)
			valuationsWith(env, params, choices, func() {
				r := ix.Enabled(cur.State, e, env)
				if r == nil {
					return
				}
				next := Snapshot{r.To, r.ApplyIn(sc, env)}
				for _, msg := range sc.Effects(r, cur.Vars, next.Vars) {
					if !reported[msg] {
						reported[msg] = true
						res.EffectErrors = append(res.EffectErrors, msg)
					}
				}
				res.Fired[r.ID] = true
				if k := key(next.State, next.Vars); !seen[k] {
					seen[k] = true
					queue = append(queue, next)
				}
			})
		}
	}
	return res
}
