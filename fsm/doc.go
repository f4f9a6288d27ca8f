// Package fsm is the typed pod lifecycle machine. Its states, events,
// record variables, guards and updates are generated from the table in
// package spec (files zz_generated.*.go); the hand-written part runs them on
// top of github.com/looplab/fsm.
//
// Machine.Fire is the only way to change a pod's state or variables: it
// picks the one row whose generated guard holds, checks a state-changing
// row against looplab's table, applies the row's generated updates and
// reports the transition to the observer. Nothing exported sets a state
// or a variable directly.
//
// looplab's table is the declarative FSM every state change is checked
// against, in one of two modes. New asks looplab, once per row when the
// machine is built, where the row's event goes from the row's source (with
// looplab's own Event) and Fire compares each state change with that
// answer: a looplab FSM's table never changes once built, so this refuses
// exactly the rows the full Event would refuse, for an array read instead
// of ~330 ns and 5 allocations per change (BenchmarkFire against
// BenchmarkFireChecked; looplab's SetState and Can would cost ~100 ns of
// locks to re-ask the same question). NewChecked runs looplab's full Event
// for every state change; the explorer and the engine's tests run it.
// TestLooplabTableIsTheGenerated proves both tables equal, and
// TestBothModesRefuseWhatLooplabRefuses that both modes refuse the same
// rows when they are not.
package fsm

//go:generate go run ../gen -root ..
