package fsm

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// referenceFields lists the fields of a struct type that refer to memory
// (maps, slices, pointers, functions, interfaces, channels).
func referenceFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		switch f.Type.Kind() {
		case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Func, reflect.Interface, reflect.Chan:
			out = append(out, f.Name)
		}
	}
	return out
}

// TestCopyIntoCopiesEveryField: CopyInto copies the fields a state change
// writes (recs, index, slots, waiting) and shares only what Clone shares; a new
// field that refers to memory must be added to one of the two lists (and,
// when a state change writes it, to CopyInto).
func TestCopyIntoCopiesEveryField(t *testing.T) {
	// shared: lf, ctx, looplabTo, observer; copied: recs, index, slots, waiting.
	want := []string{"lf", "ctx", "looplabTo", "recs", "index", "slots", "waiting", "observer"}
	if got := referenceFields(reflect.TypeFor[Machine]()); !slices.Equal(got, want) {
		t.Fatalf("Machine's reference fields are %v, not %v: update CopyInto and this list", got, want)
	}
}

// TestCopyIntoIsIndependent: a machine with another history, reset to a
// state by CopyInto, has exactly that state, and moves without moving it.
func TestCopyIntoIsIndependent(t *testing.T) {
	const name = "web_default"
	m := New(nil)
	mustFire(t, m, "a", name, Create, staticPlain)
	mustFire(t, m, "b", name, Create, staticPlain)
	scratch := New(nil)
	mustFire(t, scratch, "c", name, Create, staticPlain)
	mustFire(t, scratch, "a", name, Create, staticPlain)
	mustFire(t, scratch, "a", name, Dequeue, Params{})
	c := m.CopyInto(scratch)
	if c != scratch {
		t.Fatal("CopyInto did not reuse its destination")
	}
	if !reflect.DeepEqual(c.recs, m.recs) || !reflect.DeepEqual(c.index, m.index) || !reflect.DeepEqual(c.slots, m.slots) && len(c.slots)+len(m.slots) > 0 ||
		!reflect.DeepEqual(c.waiting, m.waiting) || c.synced != m.synced || c.syncs != m.syncs {
		t.Fatalf("the copy differs:\n copy:     %v %v %v\n original: %v %v %v", c.recs, c.slots, c.waiting, m.recs, m.slots, m.waiting)
	}
	mustFire(t, c, "a", name, Dequeue, Params{})
	mustFire(t, c, "b", name, Kill, plain)
	if r, _ := m.Get("a"); r.State != Waiting {
		t.Errorf("the original moved with its copy: a is %s", r.State)
	}
	if holder, held := m.SlotHolder(name); held {
		t.Errorf("the original's slot is held by %s", holder)
	}
	if got := m.Waiting(name); !slices.Equal(got, []types.UID{"a", "b"}) {
		t.Errorf("the original's waiting order is %v", got)
	}
	if holder, _ := c.SlotHolder(name); holder != "a" || len(c.Waiting(name)) != 0 {
		t.Errorf("the copy did not move: holder %q, waiting %v", holder, c.Waiting(name))
	}
	if m.CopyInto(nil) == nil {
		t.Fatal("CopyInto(nil) returned nil")
	}
}
