package worker

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
)

// TestCopyIntoCopiesEveryField: CopyInto copies what the Core's inputs
// write (the machine, pods, unendedLoops; effects and waiters shared
// clipped, as Clone does) and shares the rest as Clone does; a new field
// that refers to memory must be added here (and, when an input writes it,
// to CopyInto).
func TestCopyIntoCopiesEveryField(t *testing.T) {
	for _, tc := range []struct {
		typ  reflect.Type
		want []string
	}{
		{reflect.TypeFor[Core](), []string{"machine", "pods", "unendedLoops", "effects", "jitter", "clock", "metrics", "log"}},
		{reflect.TypeFor[podData](), []string{"waiters", "statusFn", "identity"}},
	} {
		var got []string
		for f := range tc.typ.Fields() {
			switch f.Type.Kind() {
			case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Func, reflect.Interface, reflect.Chan:
				got = append(got, f.Name)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s's reference fields are %v, not %v: update CopyInto and this list", tc.typ, got, tc.want)
		}
	}
}

// TestCopyIntoIsIndependent: a core with another history, reset by
// CopyInto, has the source's records, effects and loops, and moves
// without moving the source.
func TestCopyIntoIsIndependent(t *testing.T) {
	e := newCoreEnv(t)
	e.update(createOp(newPod("a", "web", false)))
	scratch := newCoreEnv(t)
	scratch.update(createOp(newPod("b", "db", false)))
	scratch.update(createOp(newPod("c", "db", false)))
	scratch.c.TakeEffects(nil)
	cp := e.c.CopyInto(scratch.c)
	if cp != scratch.c {
		t.Fatal("CopyInto did not reuse its destination")
	}
	describe := func(es []Effect) []string {
		var out []string
		for _, ef := range es {
			out = append(out, fmt.Sprintf("%s %s", ef.Kind, ef.UID))
		}
		return out
	}
	if got := describe(cp.TakeEffects(nil)); !slices.Equal(got, []string{"RunLoop a"}) {
		t.Fatalf("the copy's effects: %v", got)
	}
	for _, uid := range []string{"b", "c"} {
		if _, ok := cp.Record(types.UID(uid)); ok {
			t.Fatalf("the copy kept %s from its own history", uid)
		}
	}
	if pd := cp.pods["a"]; len(cp.pods) != 1 || pd == nil || pd.loops != 1 || len(cp.unendedLoops) != 0 {
		t.Fatalf("the copy has %d pods, %d loops of pods without one, want a alone with its loop", len(cp.pods), len(cp.unendedLoops))
	}
	if w, ok := cp.Next("a"); !ok || w.Func != fsm.InFlightSyncPod {
		t.Fatalf("the copy's Next(a) = %v, %v", w.Func, ok)
	}
	if r, _ := e.c.Record("a"); r.Vars.InFlight != fsm.InFlightNone {
		t.Fatalf("the source's record changed with the copy's: %+v", r.Vars)
	}
	if got := describe(e.c.TakeEffects(nil)); !slices.Equal(got, []string{"RunLoop a"}) {
		t.Fatalf("the source's effects: %v", got)
	}
}

// TestCopiesKeepUntakenEffects: a copy (Clone, or CopyInto a used core)
// that takes its effects and then records new ones leaves the source's
// untaken effects as they were, and the other way round.
func TestCopiesKeepUntakenEffects(t *testing.T) {
	for _, tc := range []struct {
		name string
		copy func(src *Core, t *testing.T) *Core
	}{
		{"Clone", func(src *Core, _ *testing.T) *Core { return src.Clone() }},
		{"CopyInto", func(src *Core, t *testing.T) *Core {
			scratch := newCoreEnv(t)
			scratch.update(createOp(newPod("c", "db", false)))
			return src.CopyInto(scratch.c)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCoreEnv(t)
			e.update(createOp(newPod("a", "web", false)))
			cp := tc.copy(e.c, t)
			if got := describeEffects(cp.TakeEffects(nil)); !slices.Equal(got, []string{"RunLoop a"}) {
				t.Fatalf("the copy's untaken effects: %v, want [RunLoop a]", got)
			}
			if err := cp.UpdatePod(createOp(newPod("b", "db", false)), UpdateInput{}); err != nil {
				t.Fatal(err)
			}
			if got := describeEffects(e.c.TakeEffects(nil)); !slices.Equal(got, []string{"RunLoop a"}) {
				t.Errorf("the source's untaken effects after the copy recorded its own: %v, want [RunLoop a]", got)
			}
			if err := e.c.UpdatePod(createOp(newPod("d", "db", false)), UpdateInput{}); err != nil {
				t.Fatal(err)
			}
			if got := describeEffects(cp.TakeEffects(nil)); !slices.Equal(got, []string{"RunLoop b"}) {
				t.Errorf("the copy's effects after the source recorded its own: %v, want [RunLoop b]", got)
			}
		})
	}
}

func describeEffects(es []Effect) []string {
	var out []string
	for _, ef := range es {
		out = append(out, fmt.Sprintf("%s %s", ef.Kind, ef.UID))
	}
	return out
}
