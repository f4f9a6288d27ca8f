// Package worker is podlife's pod lifecycle engine: one authority per pod
// UID that knows whether the pod's containers may start, must stop, or are
// gone, in three phases (set up and run, terminate, clean up).
//
// Core is the synchronous heart, in the manner of etcd's raft RawNode: it
// takes inputs (UpdatePod, Next, Done, Timer, SyncKnownPods), advances each
// pod's record only through the generated transitions of package fsm, and
// returns what must happen next as data (Effect, collected with
// TakeEffects): start a pod's worker loop, arm or stop its timer, close a
// kill's completion channel, cancel a sync. PodWorkers is the goroutine
// shell node agents embed: it serialises the inputs, carries the effects
// out and calls the PodSyncer. The explorer (package explore) is another
// shell: it carries the effects out in its own state and checks them.
//
// Comments cite docs/semantics.md as "semantics 1.4" (a section), "T12" (a
// transition row) or "Inv38" (an invariant).
package worker
