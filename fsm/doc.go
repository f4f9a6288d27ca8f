// Package fsm is the typed pod lifecycle machine. Its states, events,
// record variables, guards and updates are generated from the table in
// package spec (files zz_generated.*.go); the hand-written part runs them on
// top of github.com/looplab/fsm.
//
// Machine.Fire is the only way to change a pod's state or variables: it
// picks the one row whose generated guard holds, fires that row's looplab
// event when the row changes the state, applies the row's generated updates
// and reports the transition to the observer. Nothing exported sets a state
// or a variable directly.
package fsm

//go:generate go run ../gen -root ..
