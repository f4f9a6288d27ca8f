package main

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/podlife/podlife/spec"
)

// syntax is how one target language spells the expression language.
type syntax struct {
	not, and, or, eq, lt, le, min, max string
	varRef, paramRef                   func(name string) string
	ifThen                             func(c, a, b string) string
	boolean                            [2]string // false, true
	enum                               func(d *spec.Domain, value string) string
}

// goSyntax: variables read v (the record before the row fires), parameters p.
var goSyntax = syntax{
	not: "!", and: " && ", or: " || ", eq: " == ", lt: " < ", le: " <= ", min: "min", max: "max",
	varRef:   func(n string) string { return "v." + n },
	paramRef: func(n string) string { return "p." + n },
	ifThen:   func(c, a, b string) string { return "choose(" + c + ", " + a + ", " + b + ")" },
	boolean:  [2]string{"false", "true"},
	enum:     func(d *spec.Domain, v string) string { return d.Name + v },
}

// tlaSyntax: variables are fields of the record r, parameters of the record e.
var tlaSyntax = syntax{
	not: "~", and: ` /\ `, or: ` \/ `, eq: " = ", lt: " < ", le: " <= ", min: "Min", max: "Max",
	varRef:   func(n string) string { return "r." + lowerFirst(n) },
	paramRef: func(n string) string { return "e." + lowerFirst(n) },
	ifThen:   func(c, a, b string) string { return "(IF " + c + " THEN " + a + " ELSE " + b + ")" },
	boolean:  [2]string{"FALSE", "TRUE"},
	enum:     func(_ *spec.Domain, v string) string { return fmt.Sprintf("%q", v) },
}

func goExpr(e spec.Expr) string   { return goSyntax.render(e) }
func tlaExpr(e spec.Expr) string  { return tlaSyntax.render(e) }
func tlaConst(e spec.Expr) string { return tlaSyntax.constant(e) }

func (s *syntax) render(e spec.Expr) string {
	args := func(sep string) string {
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = s.render(a)
		}
		return "(" + strings.Join(parts, sep) + ")"
	}
	switch e.Op {
	case spec.OpConst:
		return s.constant(e)
	case spec.OpVar:
		return s.varRef(e.Var.Name)
	case spec.OpParam:
		return s.paramRef(e.Param.Name)
	case spec.OpNot:
		return s.not + s.render(e.Args[0])
	case spec.OpAnd:
		return args(s.and)
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
		return s.ifThen(s.render(e.Args[0]), s.render(e.Args[1]), s.render(e.Args[2]))
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
