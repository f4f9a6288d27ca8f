package spec

import "testing"

// TestPredicatesMatchTheReference checks each derived predicate against the
// kubelet's definitions over the reachable records (semantics 1.2, 1.3).
func TestPredicatesMatchTheReference(t *testing.T) {
	byName := map[string]Predicate{}
	for _, p := range Predicates {
		byName[p.Name] = p
	}
	for _, s := range States() {
		req, term := byName["TerminationRequested"].Holds(s), byName["IsTerminated"].Holds(s)
		if term && !req {
			t.Errorf("%s: terminated but termination not requested (invariant 2)", s)
		}
		if byName["IsFinished"].Holds(s) && !term {
			t.Errorf("%s: finished but not terminated (invariant 3)", s)
		}
		if byName["TerminationStarted"].Holds(s) && !req {
			t.Errorf("%s: termination started but not requested (invariant 4)", s)
		}
		if byName["MayHoldSlot"].Holds(s) && (!s.HasRecord() || byName["IsFinished"].Holds(s)) {
			t.Errorf("%s: a slot held without a live record (invariant 42)", s)
		}
	}
	if Absent.HasRecord() {
		t.Errorf("Absent must have no record")
	}
}
