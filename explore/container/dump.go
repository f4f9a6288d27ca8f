package container

import (
	"io"
	"strings"

	"github.com/podlife/podlife/explore/tlavalue"
	"github.com/podlife/podlife/explore/tlcstate"
	"github.com/podlife/podlife/spec"
	sc "github.com/podlife/podlife/spec/container"
)

// Dump writes every reachable state in TLC's -dump form, facts included,
// so that tools/dumpdiff compares them with TLC's (tools/tlc.sh --dump).
func (r *Result) Dump(out io.Writer) error {
	states := make([]tlcstate.State, len(r.nodes))
	var e envs
	for n := range r.nodes {
		r.m.fill(&e, &r.nodes[n])
		states[n] = r.m.tla(&r.nodes[n], &e)
	}
	return tlcstate.WriteDump(out, states)
}

// tla renders a state as tla/ContainerLifecycle.tla's variables.
func (m *model) tla(s *state, e *envs) tlcstate.State {
	value := func(d *spec.Domain, v int) tlavalue.Value {
		switch d.Kind {
		case spec.Bool:
			return tlavalue.Value{Kind: tlavalue.BoolValue, Bool: v == 1}
		case spec.Enum:
			return tlavalue.Value{Kind: tlavalue.StringValue, Str: d.Values[v]}
		}
		return tlavalue.Value{Kind: tlavalue.IntValue, Int: int64(v)}
	}
	field := func(name string, v tlavalue.Value) tlavalue.Field {
		return tlavalue.Field{Key: tlavalue.Value{Kind: tlavalue.StringValue, Str: strings.ToLower(name[:1]) + name[1:]}, Value: v}
	}
	ctrs := tlavalue.Value{Kind: tlavalue.SeqValue, Elems: []tlavalue.Value{}}
	facts := tlavalue.Value{Kind: tlavalue.SeqValue, Elems: []tlavalue.Value{}}
	for i := range m.n {
		rec := tlavalue.Value{Kind: tlavalue.RecordValue, Fields: []tlavalue.Field{field("state", value(sc.StateDomain, e[i].State))}}
		for k, v := range sc.Vars {
			rec.Fields = append(rec.Fields, field(v.Name, value(v.Domain, e[i].Vars[k])))
		}
		ctrs.Elems = append(ctrs.Elems, rec)
		f := tlavalue.Value{Kind: tlavalue.RecordValue}
		for k, p := range sc.Params {
			f.Fields = append(f.Fields, field(p.Name, value(p.Domain, e[i].Params[k])))
		}
		facts.Elems = append(facts.Elems, f)
	}
	return tlcstate.State{"ctr": ctrs, "facts": facts,
		"sandbox":     tlavalue.Value{Kind: tlavalue.IntValue, Int: int64(s.sandbox)},
		"ready":       tlavalue.Value{Kind: tlavalue.BoolValue, Bool: s.ready},
		"terminating": tlavalue.Value{Kind: tlavalue.BoolValue, Bool: s.terminating},
		"phase":       value(sc.PodPhaseDomain, int(s.phase)),
	}
}
