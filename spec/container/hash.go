package container

import (
	"github.com/podlife/podlife/spec"

	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Canonical renders the container table as text that changes
// whenever anything the generators read changes: domains, variables,
// parameters, events, effects, the named expressions, properties and rows.
func Canonical(rows []spec.Row) string {
	sc := Schema
	var b strings.Builder
	for _, d := range sc.Domains {
		fmt.Fprintf(&b, "domain %s %d %v %d %d\n", d.Name, d.Kind, d.Values, d.Min, d.Max)
	}
	for _, v := range sc.Vars {
		fmt.Fprintf(&b, "var %s %s\n", v.Name, v.Domain.Name)
	}
	for _, p := range sc.Params {
		fmt.Fprintf(&b, "param %s %s %v\n", p.Name, p.Domain.Name, p.World)
	}
	fmt.Fprintf(&b, "states %v\neffects %v\n", sc.StateNames, EffectNames)
	for _, e := range sc.Events {
		fmt.Fprintf(&b, "event %s %v", e.Name, e.Total)
		for _, p := range e.Params {
			fmt.Fprintf(&b, " %s", p.Name)
		}
		b.WriteByte('\n')
	}
	for _, o := range Operators {
		fmt.Fprintf(&b, "operator %s [%s]\n", o.Name, o.Expr)
	}
	for _, p := range Properties {
		fmt.Fprintf(&b, "property %s %d %s [%s] [%s]\n", p.Name, p.Kind, p.Ref, p.From, p.Holds)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "row %s %s %s %s [%s] -> %s effects=%d", r.ID, r.Ref, sc.StateName(r.From), sc.EventName(r.Event), r.Guard, sc.StateName(r.To), r.Effects)
		for _, a := range r.Set {
			fmt.Fprintf(&b, " %s:=%s", a.Var.Name, a.Value)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Hash is a short digest of Canonical(rows); the
// generated Go and TLA+ carry it.
func Hash(rows []spec.Row) string {
	sum := sha256.Sum256([]byte(Canonical(rows)))
	return hex.EncodeToString(sum[:8])
}

// Operator is a named expression over a container's record and parameters
// that the hand-written model and the Go plan use besides the rows (the
// pod-level rules of the container lifecycle). The generators render each
// as a TLA+ operator Name(r, e) and a Go function.
type Operator struct {
	Name string
	Doc  string
	Expr spec.Expr
}

// RecreateSandbox: the kubelet creates a new sandbox for a pod whose
// sandbox died, unless the pod terminates, or its restartPolicy is Never
// and some container already ran (kubelet: computePodActions; a Never pod
// whose sandbox died before any container ran gets a new one, #79398).
var RecreateSandbox = spec.And(spec.Not(spec.P(PTerminating)), spec.Or(spec.Not(spec.P(PPodNever)), spec.Not(spec.P(PAnyRan))))

// Operators are the container table's named expressions.
var Operators = []Operator{
	{Name: "BeforeDone", Doc: "the container that gates this one is done in the current sandbox", Expr: BeforeDone},
	{Name: "PolicyRestarts", Doc: "the restart policy, with restartPolicyRules, restarts the container after its last exit", Expr: PolicyRestarts},
	{Name: "MayRunAgain", Doc: "the container will run again unless the pod terminates", Expr: MayRunAgain},
	{Name: "RecreateSandbox", Doc: "the kubelet creates a new sandbox for the pod whose sandbox died", Expr: RecreateSandbox},
}
