// Package worker is podlife's pod lifecycle engine: one authority per pod
// UID that knows whether the pod's containers may start, must stop, or are
// gone, in three phases (set up and run, terminate, clean up).
//
// Core is the synchronous heart, in the manner of etcd's raft RawNode: it
// takes inputs (UpdatePod, Next, Done, Timer, SyncKnownPods), advances each
// pod's record only through the generated transitions of package fsm, and
// returns what must happen next as data (Effect, collected with
// TakeEffects): start a pod's worker loop, arm or stop its timer (a delay),
// close a kill's waiter (an ID), cancel a pod's sync (by UID). The Core is
// a plain value: it holds no channel, context, clock reading or status
// cache, so a model checker clones it cheaply. PodWorkers is the goroutine
// shell node agents embed: it serialises the inputs, maps waiter IDs to
// channels, keeps the pods' sync contexts, reads the status cache outside
// its lock, runs the pods' loops on a few shared runners (runners.go) and
// calls the PodSyncer. The explorer (package explore) is another shell: it
// carries the effects out in its own state and checks them.
//
// Cost (worker/bench_test.go; ../shared/perf for the paired comparison
// with the kubelet's pod workers): a state change is checked against
// looplab's table as looplab answered it when the engine started, not by
// looplab's Event per change (see fsm.Machine.checkLooplab; the explorer
// and this package's tests run the checked mode, Options.CheckedFSM). An
// idle-to-busy pod is queued for an awake runner instead of starting a
// goroutine.
//
// Comments cite docs/semantics.md as "semantics 1.4" (a section), "T12" (a
// transition row) or "Inv38" (an invariant).
package worker
