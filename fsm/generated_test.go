package fsm

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/podlife/podlife/spec"
)

func TestSpecHashMatchesTheTable(t *testing.T) {
	if want := spec.Hash(spec.Table); SpecHash != want {
		t.Fatalf("fsm was generated from table %s, spec.Table is %s: run go generate ./...", SpecHash, want)
	}
	if len(rows) != len(spec.Table) {
		t.Fatalf("%d generated rows, %d in the table", len(rows), len(spec.Table))
	}
}

// toVars converts spec's variable values to the generated struct, field by
// field name.
func toVars(vals []int) Vars {
	var v Vars
	rv := reflect.ValueOf(&v).Elem()
	for i, sv := range spec.Vars {
		setField(rv.FieldByName(sv.Name), vals[i])
	}
	return v
}

func toParams(vals []int) Params {
	var p Params
	rv := reflect.ValueOf(&p).Elem()
	for i, sp := range spec.Params {
		setField(rv.FieldByName(sp.Name), vals[i])
	}
	return p
}

func fromVars(v Vars) []int {
	out := make([]int, len(spec.Vars))
	rv := reflect.ValueOf(v)
	for i, sv := range spec.Vars {
		f := rv.FieldByName(sv.Name)
		switch f.Kind() {
		case reflect.Bool:
			if f.Bool() {
				out[i] = 1
			}
		case reflect.Uint8:
			out[i] = int(f.Uint())
		default:
			out[i] = int(f.Int())
		}
	}
	return out
}

func setField(f reflect.Value, v int) {
	switch f.Kind() {
	case reflect.Bool:
		f.SetBool(v == 1)
	case reflect.Uint8:
		f.SetUint(uint64(v))
	default:
		f.SetInt(int64(v))
	}
}

// TestGeneratedCodeMatchesTheTable evaluates the generated guards and
// updates against the table's own expressions on every reachable record,
// for every event and every value of the parameters the event's rows read:
// the same row must fire and produce the same variables.
func TestGeneratedCodeMatchesTheTable(t *testing.T) {
	ix := spec.NewIndex(spec.Table)
	checked := 0
	for _, snap := range spec.Reachable(spec.Table).Records {
		for _, ev := range spec.Events() {
			srows := ix.Rows(snap.State, ev)
			params := map[*spec.Param]bool{}
			for _, r := range srows {
				r.Guard.Reads(map[*spec.Var]bool{}, params)
				for _, a := range r.Set {
					a.Value.Reads(map[*spec.Var]bool{}, params)
				}
			}
			var ps []*spec.Param
			for _, p := range spec.Params {
				if params[p] {
					ps = append(ps, p)
				}
			}
			env := spec.NewEnv()
			copy(env.Vars, snap.Vars)
			forEach(env, ps, func() {
				checked++
				want := ix.Enabled(snap.State, ev, env)
				v, p := toVars(env.Vars), toParams(env.Params)
				var got *row
				for _, i := range rowsByPair[snap.State][ev] {
					if rows[i].guard(v, p) {
						got = &rows[i]
						break
					}
				}
				switch {
				case want == nil && got == nil:
				case want == nil || got == nil:
					t.Fatalf("%s %s %v: table fires %v, generated code %v", snap.State, ev, env.Params, rowName(want), got)
				case want.ID != got.id || State(want.To) != got.to:
					t.Fatalf("%s %s: table fires %s, generated code %s", snap.State, ev, want.ID, got.id)
				case want.Ignores() != got.ignores:
					t.Fatalf("row %s: the table says it ignores the event: %v, the generated code %v", want.ID, want.Ignores(), got.ignores)
				default:
					if gotVars, wantVars := fromVars(got.apply(v, p)), want.Apply(env); !reflect.DeepEqual(gotVars, wantVars) {
						t.Fatalf("row %s: generated update gives %v, the table %v", want.ID, gotVars, wantVars)
					}
				}
			})
		}
	}
	t.Logf("%d (record, event, parameters) cases agree", checked)
}

func rowName(r *spec.Row) string {
	if r == nil {
		return "nothing"
	}
	return r.ID
}

func forEach(env *spec.Env, ps []*spec.Param, f func()) {
	if len(ps) == 0 {
		f()
		return
	}
	for _, v := range ps[0].Domain.Enumerate() {
		env.Params[spec.ParamIndex(ps[0])] = v
		forEach(env, ps[1:], f)
	}
}

func TestGeneratedNamesMatchTheTable(t *testing.T) {
	for _, s := range spec.States() {
		if got := State(s).String(); got != s.String() {
			t.Errorf("state %d: generated %s, table %s", s, got, s)
		}
	}
	for _, e := range spec.Events() {
		if got := Event(e).String(); got != e.String() {
			t.Errorf("event %d: generated %s, table %s", e, got, e)
		}
		if Event(e).External() != e.Info().Total {
			t.Errorf("event %s: External() disagrees with the table", e)
		}
	}
	for _, p := range spec.Predicates {
		m := reflect.ValueOf(State(0)).MethodByName(p.Name)
		if !m.IsValid() {
			t.Fatalf("no generated predicate %s", p.Name)
		}
		for _, s := range spec.States() {
			got := reflect.ValueOf(State(s)).MethodByName(p.Name).Call(nil)[0].Bool()
			if got != p.Holds(s) {
				t.Errorf("%s.%s() = %v, table says %v", s, p.Name, got, p.Holds(s))
			}
		}
	}
	if fmt.Sprint(Start|Exit) != "Start|Exit" {
		t.Errorf("Effect.String() = %q", fmt.Sprint(Start|Exit))
	}
}
