package main

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/podlife/podlife/spec"
)

// syntax is how one target language spells the expression language. The
// syntaxes of rows read a record and an event's parameters; the syntaxes of
// properties read a pod's record, shell variables and world facts, before
// a step or (next) after it.
type syntax struct {
	not, and, or, eq, lt, le, min, max string
	varRef                             func(v *spec.Var, next bool) string
	paramRef                           func(name string) string
	// paramNext, if set, reads a parameter before or after the step (the
	// container properties: parameters are pod-level facts that change).
	paramNext func(name string, next bool) string
	ifThen    func(c, a, b string) string
	boolean   [2]string // false, true
	enum      func(d *spec.Domain, value string) string
	// Properties only.
	stateIn  func(ss []spec.State, next bool) string
	world    func(w spec.World, next bool) string
	inDomain func(v *spec.Var, next bool) string
	// prime, if set, turns an expression into its value after the step;
	// otherwise the expression is rendered with next set.
	prime func(inner string) string
}

// goSyntax: variables read v (the record before the row fires), parameters p.
var goSyntax = syntax{
	not: "!", and: " && ", or: " || ", eq: " == ", lt: " < ", le: " <= ", min: "min", max: "max",
	varRef:   func(v *spec.Var, _ bool) string { return "v." + v.Name },
	paramRef: func(n string) string { return "p." + n },
	ifThen:   func(c, a, b string) string { return "choose(" + c + ", " + a + ", " + b + ")" },
	boolean:  [2]string{"false", "true"},
	enum:     func(d *spec.Domain, v string) string { return d.Name + v },
}

// tlaSyntax: variables are fields of the record r, parameters of the record e.
var tlaSyntax = syntax{
	not: "~", and: ` /\ `, or: ` \/ `, eq: " = ", lt: " < ", le: " <= ", min: "Min", max: "Max",
	varRef:   func(v *spec.Var, _ bool) string { return "r." + lowerFirst(v.Name) },
	paramRef: func(n string) string { return "e." + lowerFirst(n) },
	ifThen:   func(c, a, b string) string { return "(IF " + c + " THEN " + a + " ELSE " + b + ")" },
	boolean:  [2]string{"FALSE", "TRUE"},
	enum:     func(_ *spec.Domain, v string) string { return fmt.Sprintf("%q", v) },
}

func goExpr(e spec.Expr) string   { return goSyntax.render(e, false) }
func tlaExpr(e spec.Expr) string  { return tlaSyntax.render(e, false) }
func tlaConst(e spec.Expr) string { return tlaSyntax.constant(e) }

func (s *syntax) render(e spec.Expr, next bool) string {
	args := func(sep string) string {
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = s.render(a, next)
		}
		return "(" + strings.Join(parts, sep) + ")"
	}
	switch e.Op {
	case spec.OpConst:
		return s.constant(e)
	case spec.OpVar:
		return s.varRef(e.Var, next)
	case spec.OpParam:
		if s.paramNext != nil {
			return s.paramNext(e.Param.Name, next)
		}
		return s.paramRef(e.Param.Name)
	case spec.OpState:
		return s.stateIn(e.States, next)
	case spec.OpWorld:
		return s.world(e.World, next)
	case spec.OpIn:
		return s.inDomain(e.Var, next)
	case spec.OpNext:
		if s.prime != nil {
			return s.prime(s.render(e.Args[0], false))
		}
		return s.render(e.Args[0], true)
	case spec.OpNot:
		return s.not + s.render(e.Args[0], next)
	case spec.OpAnd:
		var parts []string // a conjunct that is the constant true says nothing
		for _, a := range e.Args {
			if r := s.render(a, next); r != s.boolean[1] {
				parts = append(parts, r)
			}
		}
		if len(parts) == 0 {
			return s.boolean[1]
		}
		return "(" + strings.Join(parts, s.and) + ")"
	case spec.OpOr:
		return args(s.or)
	case spec.OpEq:
		return args(s.eq)
	case spec.OpLt:
		return args(s.lt)
	case spec.OpLe:
		return args(s.le)
	case spec.OpMin:
		return s.min + args(", ")
	case spec.OpMax:
		return s.max + args(", ")
	case spec.OpIf:
		return s.ifThen(s.render(e.Args[0], next), s.render(e.Args[1], next), s.render(e.Args[2], next))
	}
	panic(fmt.Sprintf("gen: operator %d has no rendering", e.Op))
}

func (s *syntax) constant(e spec.Expr) string {
	switch {
	case e.Domain == nil || e.Domain.Kind == spec.Int:
		return fmt.Sprint(e.Value)
	case e.Domain.Kind == spec.Bool:
		return s.boolean[e.Value]
	default:
		return s.enum(e.Domain, e.Domain.Values[e.Value])
	}
}

func lowerFirst(s string) string {
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}
