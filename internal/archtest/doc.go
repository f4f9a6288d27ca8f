// Package archtest holds the architecture tests: the walls between
// podlife's packages, checked with `go list` on every test run, so that a
// forbidden import fails CI instead of slowly turning the node side back
// into one room. The rules, each with its reason, are in walls_test.go; a
// new edge between packages is a deliberate change of a rule there.
package archtest
