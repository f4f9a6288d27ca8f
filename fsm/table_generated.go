//go:build !podlife_mutation

package fsm

import looplab "github.com/looplab/fsm"

// events are the looplab events of the generated table. (The mutation
// tests, built with the tag podlife_mutation, run a broken table instead:
// see table_mutated.go.)
func events() looplab.Events { return looplabEvents() }
