package trace

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/podlife/podlife/spec"
)

// StepError names the first line of a trace that the lifecycle does not
// allow.
type StepError struct {
	Step  int    // 1-based position of the line in the trace
	Seq   uint64 // the line's seq
	Pod   string
	Event string
	Msg   string
}

func (e *StepError) Error() string {
	return fmt.Sprintf("step %d (seq %d, pod %s, %s): %s", e.Step, e.Seq, e.Pod, e.Event, e.Msg)
}

// Check replays a trace against the lifecycle table (spec.Table, evaluated
// with the table's own expressions, not the generated Go code, so that a
// generator bug shows up too). It returns a *StepError for the first line
// that is not a legal step, nil if every line is.
//
// Each pod starts Absent with every variable zero, and is Absent again after
// a line that removed its record (went to Absent). For each
// line Check requires:
//
//   - seq is the line's position (no line lost, duplicated or reordered);
//   - from is the pod's tracked state;
//   - fullName is fixed for a record's life, set exactly for static records;
//   - the world facts slotFree and firstInLine equal the ones recomputed from
//     the other pods' records and the waiting order, as fsm.Machine.worldFacts
//     computes them before every event (the guards read them only on
//     Dequeue; within a SyncKnownPods call they follow the earlier lines of
//     the call, which the machine fires one by one);
//   - the one row the table enables for (from, event) with the pod's tracked
//     variables and the line's params has the line's row ID and to state,
//     and its update gives exactly the line's vars;
//   - the lines of one SyncKnownPods call (same batch number) are
//     consecutive, in UID order, batch numbers increase, and a batch has one
//     line for every pod that had a record when it began (a missing one is
//     reported at the batch's first line).
func Check(lines []Line) error {
	if mappingErr != nil {
		return mappingErr
	}
	c := &checker{pods: map[string]*record{}, removed: map[string]int{}, waiting: map[string][]string{}}
	for i := range lines {
		if err := c.step(i+1, &lines[i]); err != nil {
			return err
		}
	}
	return c.closeBatch()
}

var table = spec.NewIndex(spec.Table)

// record is a pod's tracked lifecycle record.
type record struct {
	state    spec.State
	vars     []int // indexed like spec.Vars
	fullName string
}

// batch is the SyncKnownPods call being replayed.
type batch struct {
	num      uint64
	first    int  // step of its first line
	firstLn  Line // its first line, for messages
	lastStep int
	lastPod  string
	seen     map[string]bool
	records  map[string]spec.State // the pods that had a record when it began
}

type checker struct {
	pods      map[string]*record  // pods with a record
	removed   map[string]int      // pod -> step whose line removed its last record
	waiting   map[string][]string // full name -> static pods in Waiting, in the order they entered it
	cur       *batch
	lastBatch uint64
}

func (c *checker) step(n int, l *Line) error {
	fail := func(format string, args ...any) error {
		return &StepError{Step: n, Seq: l.Seq, Pod: l.Pod, Event: l.Event, Msg: fmt.Sprintf(format, args...)}
	}
	if l.Seq != uint64(n) {
		return fail("seq is %d, want %d: a line is missing, duplicated or out of order", l.Seq, n)
	}
	ev, ok := eventByName[l.Event]
	if !ok {
		return fail("unknown event %q", l.Event)
	}
	from, ok := stateByName[l.From]
	if !ok {
		return fail("unknown from state %q", l.From)
	}
	to, ok := stateByName[l.To]
	if !ok {
		return fail("unknown to state %q", l.To)
	}
	if err := c.batchStep(n, l, ev, fail); err != nil {
		return err
	}

	r := c.pods[l.Pod]
	if r == nil {
		r = &record{state: spec.Absent, vars: make([]int, len(spec.Vars))}
	}
	if from != r.state {
		why := ""
		if at, ok := c.removed[l.Pod]; ok && r.state == spec.Absent {
			why = fmt.Sprintf(" (its record was removed at step %d, so a new incarnation starts from Absent)", at)
		}
		return fail("from %s, but the pod is %s%s", from, r.state, why)
	}

	params, err := lineParams(&l.Params)
	if err != nil {
		return fail("%v", err)
	}
	slotFree, firstInLine := c.worldFacts(l.Pod, r)
	if l.Params.SlotFree != slotFree || l.Params.FirstInLine != firstInLine {
		return fail("world facts slotFree=%t firstInLine=%t, but the records and the waiting order give slotFree=%t firstInLine=%t",
			l.Params.SlotFree, l.Params.FirstInLine, slotFree, firstInLine)
	}

	env := &spec.Env{Vars: slices.Clone(r.vars), Params: params}
	row := table.Enabled(from, ev, env)
	if row == nil {
		ids := []string{}
		for _, x := range table.Rows(from, ev) {
			ids = append(ids, x.ID)
		}
		return fail("no row of (%s, %s) is enabled by the pod's variables %s and the line's params %s (rows: %s)",
			from, ev, formatVars(r.vars), formatParams(params), strings.Join(ids, ", "))
	}
	if row.ID != l.Row {
		return fail("the table fires row %s, the line says %s", row.ID, l.Row)
	}
	if row.To != to {
		return fail("row %s goes to %s, the line says %s", row.ID, row.To, to)
	}
	got := row.Apply(env)
	want, err := lineVars(&l.Vars)
	if err != nil {
		return fail("%v", err)
	}
	if d := diffVars(got, want); d != "" {
		return fail("vars differ from row %s's update (line vs table): %s", row.ID, d)
	}

	fullName := r.fullName
	if from == spec.Absent {
		fullName = l.FullName
		static := to.HasRecord() && got[spec.VarIndex(spec.Static)] == 1
		switch {
		case static && l.FullName == "":
			return fail("a new static record has no fullName")
		case !static && l.FullName != "":
			return fail("fullName %q on a line without a static record", l.FullName)
		}
	} else if l.FullName != r.fullName {
		return fail("fullName %q, but the record's is %q", l.FullName, r.fullName)
	}

	if fullName != "" {
		switch {
		case from != spec.Waiting && to == spec.Waiting:
			c.waiting[fullName] = append(c.waiting[fullName], l.Pod)
		case from == spec.Waiting && to != spec.Waiting:
			w := slices.DeleteFunc(c.waiting[fullName], func(p string) bool { return p == l.Pod })
			if len(w) == 0 {
				delete(c.waiting, fullName)
			} else {
				c.waiting[fullName] = w
			}
		}
	}
	if to.HasRecord() {
		c.pods[l.Pod] = &record{state: to, vars: got, fullName: fullName}
	} else {
		delete(c.pods, l.Pod)
		c.removed[l.Pod] = n
	}
	return nil
}

// batchStep keeps track of SyncKnownPods calls.
func (c *checker) batchStep(n int, l *Line, ev spec.Event, fail func(string, ...any) error) error {
	if ev != spec.SyncKnownPods {
		if l.Batch != 0 {
			return fail("batch %d on a %s line: only SyncKnownPods lines belong to a batch", l.Batch, l.Event)
		}
		return c.closeBatch()
	}
	if l.Batch == 0 {
		return fail("a SyncKnownPods line without a batch number")
	}
	if b := c.cur; b != nil && b.num == l.Batch {
		switch {
		case b.seen[l.Pod]:
			return fail("pod %s appears twice in SyncKnownPods batch %d", l.Pod, l.Batch)
		case l.Pod < b.lastPod:
			return fail("SyncKnownPods batch %d is not in UID order: %s after %s", l.Batch, l.Pod, b.lastPod)
		}
	} else {
		if err := c.closeBatch(); err != nil {
			return err
		}
		if l.Batch <= c.lastBatch {
			return fail("SyncKnownPods batch %d after batch %d: the lines of one call must be consecutive and calls are numbered in order",
				l.Batch, c.lastBatch)
		}
		b := &batch{num: l.Batch, first: n, firstLn: *l, seen: map[string]bool{}, records: map[string]spec.State{}}
		for p, r := range c.pods {
			b.records[p] = r.state
		}
		c.cur, c.lastBatch = b, l.Batch
	}
	b := c.cur
	if _, ok := b.records[l.Pod]; !ok {
		return fail("pod %s had no record when SyncKnownPods batch %d began; the call only reconciles records", l.Pod, l.Batch)
	}
	b.seen[l.Pod], b.lastPod, b.lastStep = true, l.Pod, n
	return nil
}

// closeBatch ends the current SyncKnownPods call: every pod that had a
// record when it began must have had a line.
func (c *checker) closeBatch() error {
	b := c.cur
	if b == nil {
		return nil
	}
	c.cur = nil
	var missing []string
	for p, s := range b.records {
		if !b.seen[p] {
			missing = append(missing, p+" ("+s.String()+")")
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return &StepError{Step: b.first, Seq: b.firstLn.Seq, Pod: b.firstLn.Pod, Event: b.firstLn.Event,
		Msg: fmt.Sprintf("SyncKnownPods batch %d (steps %d-%d) has no line for %s, which had a record when it began",
			b.num, b.first, b.lastStep, strings.Join(missing, ", "))}
}

// worldFacts recomputes SlotFree and FirstInLine for pod p whose record is
// r, as fsm.Machine.worldFacts does: a pod without a full name (not static,
// or no record) has SlotFree and not FirstInLine.
func (c *checker) worldFacts(p string, r *record) (slotFree, firstInLine bool) {
	if r.fullName == "" {
		return true, false
	}
	slotFree = true
	for q, o := range c.pods {
		if q != p && o.fullName == r.fullName && holdsSlot(o) {
			slotFree = false
		}
	}
	w := c.waiting[r.fullName]
	return slotFree, len(w) > 0 && w[0] == p
}

func holdsSlot(r *record) bool {
	return r.vars[spec.VarIndex(spec.Static)] == 1 && r.vars[spec.VarIndex(spec.Started)] == 1 && mayHoldSlot.Holds(r.state)
}

var (
	stateByName = map[string]spec.State{}
	eventByName = map[string]spec.Event{}
	mayHoldSlot spec.Predicate

	// varFields[i] and paramFields[i] are the indexes of the Vars and Params
	// fields of spec.Vars[i] and spec.Params[i]; mappingErr reports a
	// variable or parameter of the table that Line cannot carry.
	varFields, paramFields []int
	mappingErr             error
)

func init() {
	for _, s := range spec.States() {
		stateByName[s.String()] = s
	}
	for _, e := range spec.Events() {
		eventByName[e.String()] = e
	}
	for _, p := range spec.Predicates {
		if p.Name == "MayHoldSlot" {
			mayHoldSlot = p
		}
	}
	var errs []string
	varFields, errs = fieldIndexes(reflect.TypeFor[Vars](), spec.Vars, func(v *spec.Var) (string, *spec.Domain) { return v.Name, v.Domain })
	var perrs []string
	paramFields, perrs = fieldIndexes(reflect.TypeFor[Params](), spec.Params, func(p *spec.Param) (string, *spec.Domain) { return p.Name, p.Domain })
	if errs = append(errs, perrs...); len(errs) > 0 {
		mappingErr = fmt.Errorf("trace: Line does not match the table: %s", strings.Join(errs, "; "))
	}
}

// fieldIndexes finds, for each variable or parameter of the table, the
// field of t with its name and a Go type fit for its domain, and reports
// fields of t that the table does not have.
func fieldIndexes[T any](t reflect.Type, items []T, describe func(T) (string, *spec.Domain)) ([]int, []string) {
	var idx []int
	var errs []string
	names := map[string]bool{}
	for _, it := range items {
		name, d := describe(it)
		names[name] = true
		f, ok := t.FieldByName(name)
		if !ok {
			errs = append(errs, fmt.Sprintf("%s has no field %s", t.Name(), name))
			idx = append(idx, -1)
			continue
		}
		want := map[spec.Kind]reflect.Kind{spec.Bool: reflect.Bool, spec.Int: reflect.Int64, spec.Enum: reflect.String}[d.Kind]
		if f.Type.Kind() != want {
			errs = append(errs, fmt.Sprintf("%s.%s is %s, want %s", t.Name(), name, f.Type.Kind(), want))
		}
		idx = append(idx, f.Index[0])
	}
	for i := range t.NumField() {
		if n := t.Field(i).Name; !names[n] {
			errs = append(errs, fmt.Sprintf("%s.%s is not in the table", t.Name(), n))
		}
	}
	return idx, errs
}

func lineVars(v *Vars) ([]int, error) {
	return values(reflect.ValueOf(v).Elem(), varFields, len(spec.Vars), func(i int) (string, *spec.Domain) {
		return spec.Vars[i].Name, spec.Vars[i].Domain
	})
}

func lineParams(p *Params) ([]int, error) {
	return values(reflect.ValueOf(p).Elem(), paramFields, len(spec.Params), func(i int) (string, *spec.Domain) {
		return spec.Params[i].Name, spec.Params[i].Domain
	})
}

// values converts a Vars or Params struct into the table's []int encoding.
func values(rv reflect.Value, fields []int, n int, describe func(int) (string, *spec.Domain)) ([]int, error) {
	out := make([]int, n)
	for i := range n {
		f := rv.Field(fields[i])
		name, d := describe(i)
		switch f.Kind() {
		case reflect.Bool:
			if f.Bool() {
				out[i] = 1
			}
		case reflect.Int64:
			out[i] = int(f.Int())
		case reflect.String:
			v := slices.Index(d.Values, f.String())
			if v < 0 {
				return nil, fmt.Errorf("%s: %q is not a value of %s (%s)", lowerFirst(name), f.String(), d.Name, strings.Join(d.Values, ", "))
			}
			out[i] = v
		}
	}
	return out, nil
}

// diffVars lists the variables whose values differ, as "name: line X, table Y".
func diffVars(table, line []int) string {
	var d []string
	for i, v := range spec.Vars {
		if table[i] != line[i] {
			d = append(d, fmt.Sprintf("%s: line %s, table %s", lowerFirst(v.Name), v.Domain.Format(line[i]), v.Domain.Format(table[i])))
		}
	}
	return strings.Join(d, "; ")
}

func formatVars(vals []int) string {
	parts := make([]string, len(spec.Vars))
	for i, v := range spec.Vars {
		parts[i] = lowerFirst(v.Name) + "=" + v.Domain.Format(vals[i])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func formatParams(vals []int) string {
	parts := make([]string, len(spec.Params))
	for i, p := range spec.Params {
		parts[i] = lowerFirst(p.Name) + "=" + p.Domain.Format(vals[i])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// lowerFirst is the TLA+ and trace name of a Go field name.
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
