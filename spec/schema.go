package spec

// Schema is what Validate, Reachable and the generators need to know about
// one table besides its rows: its states, events, record variables and
// parameters, the state of a record that does not exist yet, and the
// table's own rules about a row's shape and effects. The pod table
// (PodSchema) and the container table (spec/container's Schema) share the
// expression language, the checks and the generators through it.
//
// A table's State and Event values are indexes into its StateNames and
// Events.
type Schema struct {
	Name       string // the TLA+ module prefix: PodLifecycle, ContainerLifecycle
	StateNames []string
	// Initial is the state of a record before any row fired; a valid table
	// reaches every state from it.
	Initial State
	Events  []EventInfo
	Vars    []*Var
	Params  []*Param
	// Domains lists the domains the generators declare, in order.
	Domains []*Domain
	// HasRecord tells whether a record in the state has variables at all
	// (Validate enumerates no variable of one that has none).
	HasRecord func(State) bool
	// Shape returns what is wrong with a row's shape for this table, or "".
	Shape func(r *Row) string
	// Effects returns the rows' effects that disagree with what the row
	// does to one reachable record (before and after are indexed like Vars).
	Effects func(r *Row, before, after []int) []string
}

// StateName is s's name in this table.
func (sc *Schema) StateName(s State) string {
	if int(s) < len(sc.StateNames) {
		return sc.StateNames[s]
	}
	return "State(invalid)"
}

// EventName is e's name in this table.
func (sc *Schema) EventName(e Event) string {
	if int(e) < len(sc.Events) {
		return sc.Events[e].Name
	}
	return "Event(invalid)"
}

// AllStates lists the table's states in order.
func (sc *Schema) AllStates() []State {
	ss := make([]State, len(sc.StateNames))
	for i := range ss {
		ss[i] = State(i)
	}
	return ss
}

// AllEvents lists the table's events in order.
func (sc *Schema) AllEvents() []Event {
	es := make([]Event, len(sc.Events))
	for i := range es {
		es[i] = Event(i)
	}
	return es
}

// NewEnv returns an environment with every variable and parameter of the
// table at zero.
func (sc *Schema) NewEnv() *Env {
	return &Env{Vars: make([]int, len(sc.Vars)), Params: make([]int, len(sc.Params))}
}

// PodSchema describes the pod lifecycle table (Table).
var PodSchema = &Schema{
	Name:       "PodLifecycle",
	StateNames: stateNames[:],
	Initial:    Absent,
	Events:     eventInfo[:],
	Vars:       Vars,
	Params:     Params,
	Domains:    Domains,
	HasRecord:  State.HasRecord,
	Shape:      podShape,
	Effects:    effectErrors,
}
