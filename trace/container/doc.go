// Package container records the decisions of the container lifecycle
// (fsm/container) as traces and validates them against the container table,
// as package trace does for the pod lifecycle. Its kubelet counterpart is
// none: the kubelet's computePodActions leaves no record of why it acted.
//
// A Recorder writes every container transition as one line of NDJSON:
//
//	{"seq":3,"pod":"uid-1","sync":7,"container":"app","event":"Exit","row":"RunningExitFailure","from":"Running","to":"ExitedFailure","params":{...},"before":{...},"after":{...},"effects":[]}
//
// Every field is always present, in this order:
//
//   - seq: the 1-based line number;
//   - pod: the pod UID; container: the container's name in the pod;
//   - sync: the number of the pod's sync the line belongs to (Begin), or 0
//     for a caller that sees every transition (Recorder.Record);
//   - event, row, from, to: the event, the row that fired (its ID) and the
//     container's state before and after, by name;
//   - params: every field of fsm/container.Params the row was fired with
//     (the container's spec and the pod-level facts);
//   - before, after: every field of fsm/container.Vars before and after the
//     row;
//   - effects: the row's effects (fsm/container.Effect) by name, in bit
//     order.
//
// Fields are named as in the TLA+ records of tla/ContainerLifecycleTable.tla
// (the Go field name with a lower-case first letter); booleans are
// true/false, integers JSON numbers, enums their names.
//
// Read parses a trace into the typed values of fsm/container; Check replays
// it with fsm/container.Fire and names the first line that Fire does not
// reproduce. tla/TraceContainerLifecycle.tla replays the same file in TLC
// against the generated TLA+ table (tools/tlc.sh --trace-config
// TraceContainerLifecycle --trace FILE; tla/README.md, "Trace validation").
//
// Both read a container's lines of one sync as one history: a line's
// before-record must be the after-record of the container's previous line
// if that line has the same sync number. A container's first line in a
// sync may start from any record: a plan observes its containers afresh
// in each sync (the runtime's inputs, an instance's exit or a probe's
// success, change records between syncs without a line), and a trace may
// begin while the pod runs. Lines of sync 0 all chain: a caller that fires
// every transition (the model's random walks in the tests) records them
// there. A pod's sync numbers never go back.
package container
