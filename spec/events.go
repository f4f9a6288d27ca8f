package spec

// Event is an input that may change a pod's record.
type Event uint8

const (
	// Create is UpdatePod with SyncPodCreate.
	Create Event = iota
	// Update is UpdatePod with SyncPodUpdate or SyncPodSync: the lifecycle
	// treats a configuration change and a plain resync alike.
	Update
	// Kill is UpdatePod with SyncPodKill.
	Kill
	// RuntimeKill is UpdatePod with SyncPodKill for a pod known only from the
	// container runtime (RunningPod set, Pod nil).
	RuntimeKill
	// RuntimeUpdate is UpdatePod of another type for a runtime-only pod; it
	// is dropped (the engine also reports it as invalid input).
	RuntimeUpdate
	// Dequeue is the worker taking the pending update (startPodSync).
	Dequeue
	// SyncPodDone: SyncPod returned no error and a non-terminal pod.
	SyncPodDone
	// SyncPodTerminal: SyncPod reported that the pod reached a terminal phase.
	SyncPodTerminal
	// SyncPodFailed: SyncPod returned an error (or was cancelled).
	SyncPodFailed
	// TerminatingDone: SyncTerminatingPod or SyncTerminatingRuntimePod succeeded.
	TerminatingDone
	// TerminatingFailed: SyncTerminatingPod or SyncTerminatingRuntimePod failed.
	TerminatingFailed
	// TerminatedDone: SyncTerminatedPod succeeded.
	TerminatedDone
	// TerminatedFailed: SyncTerminatedPod failed.
	TerminatedFailed
	// Requeue: the worker's retry, resync or back-off timer fired.
	Requeue
	// SyncKnownPods: the record is reconciled with the desired pods.
	SyncKnownPods

	numEvents = iota
)

// EventInfo describes an event: its name in traces and TLA+, whether the
// outside world sends it (and so every state must define its outcome), and
// the parameters its guards may read.
type EventInfo struct {
	Name   string
	Doc    string
	Total  bool // every (state, valuation) has exactly one row
	Params []*Param
}

var updateParams = []*Param{PStatic, PDeleting, PTerminalPhase, PRuntimeTerminal, PGraceOverride, PSpecGrace, PNotify}

var eventInfo = [numEvents]EventInfo{
	Create:            {Name: "Create", Total: true, Params: updateParams, Doc: "UpdatePod(create)"},
	Update:            {Name: "Update", Total: true, Params: updateParams, Doc: "UpdatePod(update or sync)"},
	Kill:              {Name: "Kill", Total: true, Params: append(updateParams[:len(updateParams):len(updateParams)], PEvict), Doc: "UpdatePod(kill)"},
	RuntimeKill:       {Name: "RuntimeKill", Total: true, Params: []*Param{PGraceOverride, PSpecGrace, PNotify}, Doc: "UpdatePod(kill) of a runtime-only pod"},
	RuntimeUpdate:     {Name: "RuntimeUpdate", Total: true, Doc: "UpdatePod(non-kill) of a runtime-only pod"},
	Dequeue:           {Name: "Dequeue", Params: []*Param{PSlotFree, PFirstInLine}, Doc: "the worker takes the pending update"},
	SyncPodDone:       {Name: "SyncPodDone", Doc: "SyncPod succeeded"},
	SyncPodTerminal:   {Name: "SyncPodTerminal", Doc: "SyncPod reported a terminal pod"},
	SyncPodFailed:     {Name: "SyncPodFailed", Doc: "SyncPod failed"},
	TerminatingDone:   {Name: "TerminatingDone", Doc: "the terminating sync succeeded"},
	TerminatingFailed: {Name: "TerminatingFailed", Doc: "the terminating sync failed"},
	TerminatedDone:    {Name: "TerminatedDone", Doc: "SyncTerminatedPod succeeded"},
	TerminatedFailed:  {Name: "TerminatedFailed", Doc: "SyncTerminatedPod failed"},
	Requeue:           {Name: "Requeue", Total: true, Doc: "the worker's timer fired"},
	SyncKnownPods:     {Name: "SyncKnownPods", Total: true, Params: []*Param{POrphan, PGraceOverride, PSpecGrace}, Doc: "SyncKnownPods reconciles the record"},
}

// IsUpdatePod reports whether the event is an UpdatePod call.
func (e Event) IsUpdatePod() bool { return e <= RuntimeUpdate }

// Info returns the event's description.
func (e Event) Info() EventInfo { return eventInfo[e] }

func (e Event) String() string {
	if int(e) < len(eventInfo) {
		return eventInfo[e].Name
	}
	return "Event(invalid)"
}

// Events lists every event in order.
func Events() []Event {
	es := make([]Event, numEvents)
	for i := range es {
		es[i] = Event(i)
	}
	return es
}
