package spec

// State is the lifecycle state of one pod UID (semantics 1.2). Each
// constant's comment names its successors; TestStateDocsNameSuccessors keeps
// those lists equal to the table.
type State uint8

const (
	// Absent: the UID has no record: it never had one here, or its record
	// was removed (the engine deletes it; a new incarnation may follow).
	// Successors: Waiting, TerminationRequested, Terminated.
	Absent State = iota

	// Waiting: the record exists but the pod has not started; for a static
	// pod, another UID with the same full name may hold the slot.
	// Successors: Absent, Running, TerminationRequested.
	Waiting

	// Running: the pod started and termination has not been requested;
	// SyncPod sets it up and keeps it running.
	// Successors: TerminationRequested, Terminating.
	Running

	// TerminationRequested: termination is latched but the worker has not
	// taken it yet; a SyncPod may still be in flight.
	// Successors: Absent, Terminating, Finished.
	TerminationRequested

	// Terminating: no new container may start; SyncTerminatingPod (or
	// SyncTerminatingRuntimePod) stops the running ones.
	// Successors: Absent, Terminated.
	Terminating

	// Terminated: no container runs or will run; SyncTerminatedPod cleans up.
	// Successors: Absent, Finished.
	Terminated

	// Finished: the worker is done; the record stays as a tombstone so the
	// UID cannot silently restart.
	// Successors: Absent.
	Finished

	numStates = iota
)

var stateNames = [numStates]string{"Absent", "Waiting", "Running", "TerminationRequested", "Terminating", "Terminated", "Finished"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(invalid)"
}

// States lists every state in order.
func States() []State {
	ss := make([]State, numStates)
	for i := range ss {
		ss[i] = State(i)
	}
	return ss
}

// HasRecord reports whether a pod in state s has a lifecycle record.
func (s State) HasRecord() bool { return Predicates[0].Holds(s) }
