package spec

import (
	"errors"
	"fmt"
	"go/token"
	"sort"
)

// Validate checks a table and returns every problem it finds:
//   - a row ID that is empty, repeated or not a Go identifier;
//   - an ill-typed guard or update, a variable written twice by one row, a
//     guard reading a parameter its event does not carry, or a row reading
//     what only properties may (the state, world facts, shell variables);
//   - two rows of one (state, event) whose guards can both hold;
//   - a reachable record and parameter valuation with no row, for events
//     the outside world sends;
//   - an update that writes a value outside its variable's domain;
//   - a row that changes a UID without a record but does not create one, a
//     removal (a row into Absent) that does not reset the record;
//   - TakeUpdate on a row that does not queue an update, or missing on one
//     that does;
//   - effects that disagree with the updates on a reachable record (Start
//     without a sync put in flight, waiters dropped without CloseWaiters);
//   - a state no behaviour reaches from Absent.
func Validate(rows []Row) error { return PodSchema.Validate(rows) }

// Validate checks a table of this schema; see the package function Validate
// for the checks (the shape and effect rules are the schema's own).
func (sc *Schema) Validate(rows []Row) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	ids := map[string]bool{}
	for i := range rows {
		r := &rows[i]
		switch {
		case r.ID == "" || !token.IsIdentifier(r.ID):
			fail("row %d: ID %q is not an identifier", i, r.ID)
		case ids[r.ID]:
			fail("row %s: duplicate ID", r.ID)
		}
		ids[r.ID] = true
		sc.checkTypes(r, fail)
		if msg := sc.Shape(r); msg != "" {
			fail("row %s: %s", r.ID, msg)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...) // the semantic checks need well-formed rows
	}
	ix := sc.NewIndex(rows)
	reached := sc.Reachable(rows)
	for _, s := range sc.AllStates() {
		for _, e := range sc.AllEvents() {
			sc.checkPair(ix, s, e, fail)
			sc.checkTotal(ix, reached.Records, s, e, fail)
		}
	}
	for i := range rows {
		sc.checkUpdates(&rows[i], fail)
	}
	for _, msg := range reached.EffectErrors {
		fail("%s", msg)
	}
	for _, s := range sc.AllStates() {
		if reached.States[s] == 0 {
			fail("state %s cannot be reached from %s", sc.StateName(s), sc.StateName(sc.Initial))
		}
	}
	return errors.Join(errs...)
}

func (sc *Schema) checkTypes(r *Row, fail func(string, ...any)) {
	k, _, err := r.Guard.typeOf()
	switch {
	case err != nil:
		fail("row %s: guard: %v", r.ID, err)
	case k != Bool:
		fail("row %s: guard %s is not Bool", r.ID, r.Guard)
	}
	for _, e := range append([]Expr{r.Guard}, assigned(r)...) {
		if op, ok := propertyOnly(e); ok {
			fail("row %s: %s reads %s, which only properties may", r.ID, e, op)
		}
	}
	allowed := map[*Param]bool{}
	if int(r.Event) >= len(sc.Events) || int(r.From) >= len(sc.StateNames) || int(r.To) >= len(sc.StateNames) {
		fail("row %s: state or event outside the %s table", r.ID, sc.Name)
		return
	}
	for _, p := range sc.Events[r.Event].Params {
		allowed[p] = true
	}
	_, params := rowReads(r, fail)
	for _, a := range r.Set {
		k, d, err := a.Value.typeOf()
		switch {
		case err != nil:
			fail("row %s: %s := %v", r.ID, a.Var.Name, err)
		case k != a.Var.Domain.Kind || (k == Enum && d != a.Var.Domain):
			fail("row %s: %s := %s has the wrong type", r.ID, a.Var.Name, a.Value)
		}
	}
	for p := range params {
		if !allowed[p] {
			fail("row %s: reads parameter %s, which %s does not carry", r.ID, p.Name, sc.EventName(r.Event))
		}
	}
}

// podShape is the pod table's rule for the shape of a row.
func podShape(r *Row) string {
	switch {
	case r.From == Absent && r.To == Absent && !r.Ignores():
		return "changes a UID that has no record"
	case r.To == Absent && r.From != Absent && !r.Reset:
		return "removes the record without resetting it"
	case r.Reset && (r.To != Absent || r.From == Absent):
		return "resets a record but does not remove it"
	case r.Reset && len(r.Set) > 0:
		return "resets the record and also writes variables"
	case !r.From.HasRecord() && r.To.HasRecord() && r.Event != RuntimeKill && !writes(r, HasConfig):
		return "creates a record without HasConfig"
	case r.Effects.Has(TakeUpdate) != (r.Event.IsUpdatePod() && writes(r, Pending)):
		return "TakeUpdate must mark exactly the UpdatePod rows that queue the update"
	}
	return ""
}

// rowReads collects what a row's guard and updates read, and reports a
// variable the row writes twice (one update would silently win).
func rowReads(r *Row, fail func(string, ...any)) (map[*Var]bool, map[*Param]bool) {
	vars, params := map[*Var]bool{}, map[*Param]bool{}
	r.Guard.Reads(vars, params)
	written := map[*Var]bool{}
	for _, a := range r.Set {
		if written[a.Var] {
			fail("row %s: writes %s twice", r.ID, a.Var.Name)
		}
		written[a.Var] = true
		a.Value.Reads(vars, params)
	}
	return vars, params
}

func assigned(r *Row) []Expr {
	out := make([]Expr, len(r.Set))
	for i, a := range r.Set {
		out[i] = a.Value
	}
	return out
}

// propertyOnly finds a node of e that a row may not contain: the state,
// a step's end, a world fact, a domain test or a shell variable.
func propertyOnly(e Expr) (string, bool) {
	switch {
	case e.Op == OpState || e.Op == OpNext || e.Op == OpWorld || e.Op == OpIn:
		return e.String(), true
	case e.Op == OpVar && e.Var.Shell:
		return "the shell variable " + e.Var.Name, true
	}
	for _, a := range e.Args {
		if s, ok := propertyOnly(a); ok {
			return s, true
		}
	}
	return "", false
}

func writes(r *Row, v *Var) bool {
	for _, a := range r.Set {
		if a.Var == v {
			return true
		}
	}
	return false
}

// pairReads lists what the guards of one (state, event) read, and with
// updates also what their updates read.
func pairReads(rs []*Row, updates bool) ([]*Var, []*Param) {
	vars, params := map[*Var]bool{}, map[*Param]bool{}
	for _, r := range rs {
		r.Guard.Reads(vars, params)
		for _, a := range r.Set {
			if updates {
				a.Value.Reads(vars, params)
			}
		}
	}
	return sortedVars(vars), sortedParams(params)
}

func (sc *Schema) checkPair(ix *Index, s State, e Event, fail func(string, ...any)) {
	rs := ix.Rows(s, e)
	sn, en := sc.StateName(s), sc.EventName(e)
	if len(rs) == 0 {
		if sc.Events[e].Total {
			fail("(%s, %s): no row, but %s comes from outside and needs an outcome in every state", sn, en, en)
		}
		return
	}
	vars, params := pairReads(rs, false)
	if !sc.HasRecord(s) {
		vars = nil // no record: every variable is zero
	}
	env := sc.NewEnv()
	reported := map[string]bool{}
	valuations(env, vars, params, func() {
		var on []string
		for _, r := range rs {
			if r.Guard.Eval(env) == 1 {
				on = append(on, r.ID)
			}
		}
		if len(on) > 1 && !reported[on[0]+on[1]] {
			reported[on[0]+on[1]] = true
			fail("(%s, %s): rows %s and %s can both fire, e.g. with %s", sn, en, on[0], on[1], describe(env, vars, params))
		}
	})
}

// checkTotal requires a row for every reachable record of state s and every
// valuation of the parameters, when e comes from outside. Records no
// behaviour reaches need no outcome.
func (sc *Schema) checkTotal(ix *Index, records []Snapshot, s State, e Event, fail func(string, ...any)) {
	rs := ix.Rows(s, e)
	if !sc.Events[e].Total || len(rs) == 0 {
		return // an outside event with no row at all is reported by checkPair
	}
	vars, params := pairReads(rs, false)
	env := sc.NewEnv()
	for _, rec := range records {
		if rec.State != s {
			continue
		}
		copy(env.Vars, rec.Vars)
		missing := false
		valuations(env, nil, params, func() {
			if !missing && ix.Enabled(s, e, env) == nil {
				missing = true
				fail("(%s, %s): no row fires on the reachable record %s", sc.StateName(s), sc.EventName(e), describe(env, vars, params))
			}
		})
		if missing {
			return
		}
	}
}

func (sc *Schema) checkUpdates(r *Row, fail func(string, ...any)) {
	vars, params := rowReads(r, fail)
	vs, ps := sortedVars(vars), sortedParams(params)
	if !sc.HasRecord(r.From) {
		vs = nil
	}
	env := sc.NewEnv()
	reported := map[string]bool{}
	once := func(key, format string, args ...any) {
		if !reported[key] {
			reported[key] = true
			fail(format, args...)
		}
	}
	valuations(env, vs, ps, func() {
		if r.Guard.Eval(env) != 1 {
			return
		}
		after := r.ApplyIn(sc, env)
		for _, a := range r.Set {
			if v := after[VarIndex(a.Var)]; !a.Var.Domain.Contains(v) {
				once("domain"+a.Var.Name, "row %s: writes %s = %d, outside %s, with %s", r.ID, a.Var.Name, v, a.Var.Domain.Name, describe(env, vs, ps))
			}
		}
	})
}

func describe(env *Env, vars []*Var, params []*Param) string {
	s := ""
	for _, v := range vars {
		s += fmt.Sprintf("%s=%s ", v.Name, v.Domain.Format(env.Vars[VarIndex(v)]))
	}
	for _, p := range params {
		s += fmt.Sprintf("$%s=%s ", p.Name, p.Domain.Format(env.Params[ParamIndex(p)]))
	}
	if s == "" {
		return "any values"
	}
	return s[:len(s)-1]
}

func sortedVars(m map[*Var]bool) []*Var {
	out := make([]*Var, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return VarIndex(out[i]) < VarIndex(out[j]) })
	return out
}

func sortedParams(m map[*Param]bool) []*Param {
	out := make([]*Param, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return ParamIndex(out[i]) < ParamIndex(out[j]) })
	return out
}

// EachValuation calls f for every (state, event) pair of rows and every
// valuation of what the pair's guards read, with the number of rows that
// fire: tests of determinism and totality for any table are built on it.
func (sc *Schema) EachValuation(rows []Row, f func(s State, e Event, fired int, valuation string)) {
	ix := sc.NewIndex(rows)
	for _, s := range sc.AllStates() {
		for _, e := range sc.AllEvents() {
			rs := ix.Rows(s, e)
			vars, params := pairReads(rs, false)
			if !sc.HasRecord(s) {
				vars = nil // no record: every variable is zero
			}
			env := sc.NewEnv()
			valuations(env, vars, params, func() {
				n := 0
				for _, r := range rs {
					n += r.Guard.Eval(env)
				}
				f(s, e, n, describe(env, vars, params))
			})
		}
	}
}
