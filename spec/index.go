package spec

// Index groups a table's rows by (state, event) in table order.
type Index struct{ pairs [][][]*Row }

// NewIndex indexes rows of the pod table. The rows must outlive the index.
func NewIndex(rows []Row) *Index { return PodSchema.NewIndex(rows) }

// NewIndex indexes rows of sc's table. The rows must outlive the index.
func (sc *Schema) NewIndex(rows []Row) *Index {
	ix := &Index{pairs: make([][][]*Row, len(sc.StateNames))}
	for s := range ix.pairs {
		ix.pairs[s] = make([][]*Row, len(sc.Events))
	}
	for i := range rows {
		r := &rows[i]
		if int(r.From) < len(sc.StateNames) && int(r.Event) < len(sc.Events) {
			ix.pairs[r.From][r.Event] = append(ix.pairs[r.From][r.Event], r)
		}
	}
	return ix
}

// Rows returns the rows of (s, e).
func (ix *Index) Rows(s State, e Event) []*Row { return ix.pairs[s][e] }

// Enabled returns the row of (s, e) whose guard holds in env, or nil. With
// a valid table at most one does.
func (ix *Index) Enabled(s State, e Event, env *Env) *Row {
	for _, r := range ix.pairs[s][e] {
		if r.Guard.Eval(env) == 1 {
			return r
		}
	}
	return nil
}

// valuationsWith calls f with every combination of the parameters' values
// drawn from choices.
func valuationsWith(env *Env, params []*Param, choices func(*Param) []int, f func()) {
	var rec func(i int)
	rec = func(i int) {
		if i == len(params) {
			f()
			return
		}
		for _, v := range choices(params[i]) {
			env.Params[ParamIndex(params[i])] = v
			rec(i + 1)
		}
	}
	rec(0)
}

// valuations calls f with env set to every combination of the given
// variables' and parameters' values; the others stay as they are in env.
func valuations(env *Env, vars []*Var, params []*Param, f func()) {
	type slot struct {
		dst    *int
		values []int
	}
	var slots []slot
	for _, v := range vars {
		slots = append(slots, slot{&env.Vars[VarIndex(v)], v.Domain.Enumerate()})
	}
	for _, p := range params {
		slots = append(slots, slot{&env.Params[ParamIndex(p)], p.Domain.Enumerate()})
	}
	var rec func(i int)
	rec = func(i int) {
		if i == len(slots) {
			f()
			return
		}
		for _, v := range slots[i].values {
			*slots[i].dst = v
			rec(i + 1)
		}
	}
	rec(0)
}

// NewEnv returns an environment with every variable and parameter at zero.
func NewEnv() *Env {
	return &Env{Vars: make([]int, len(Vars)), Params: make([]int, len(Params))}
}
