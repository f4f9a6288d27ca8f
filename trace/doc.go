// Package trace records the lifecycle transitions of a running engine and
// validates them against the lifecycle table.
//
// A Writer is an fsm.Observer (pass it as worker.Options.Observer) that
// writes every transition the machine fires as one line of NDJSON:
//
//	{"seq":1,"pod":"p1","fullName":"web_default","event":"Kill","row":"RunningKillTerminate","from":"Running","to":"TerminationRequested","batch":0,"params":{...},"vars":{...}}
//
// Every field is always present, in this order:
//
//   - seq: the 1-based line number;
//   - pod: the pod UID;
//   - fullName: the static pod's full name, "" for other pods;
//   - event, row, from, to: the event, the row that fired (its ID) and the
//     states before and after, by name;
//   - batch: the number of the SyncKnownPods call the line belongs to (1 for
//     the first call), 0 for other events; the lines of one call are
//     consecutive and form one step of the model;
//   - params: every field of fsm.Params, world facts included;
//   - vars: every field of fsm.Vars after the row.
//
// The fields of params and vars are named as in the TLA+ records (the Go
// field name with a lower-case first letter): params static, deleting,
// terminalPhase, runtimeTerminal, graceOverride, specGrace, notify, evict,
// orphan, slotFree, firstInLine; vars static, hasConfig, started, deleted,
// evicted, restartRequested, observedRuntime, grace, pending, inFlight,
// waiters. Booleans are true/false, integers JSON numbers, enums (pending,
// inFlight) their names ("Queued", "SyncPod").
//
// Read parses a trace; Check replays it against spec.Table (with the table's
// own expressions, not the generated code) and names the first step the
// table does not allow. tla/TracePodLifecycle.tla replays the same file in
// TLC against the TLA+ model (see tla/README.md, "Trace validation").
package trace
