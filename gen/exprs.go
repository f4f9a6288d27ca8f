package main

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/podlife/podlife/spec"
)

// goExpr renders e as Go: variables read v (the record before the row
// fires), parameters read p.
func goExpr(e spec.Expr) string {
	args := func(sep string) string {
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = goExpr(a)
		}
		return "(" + strings.Join(parts, sep) + ")"
	}
	switch e.Op {
	case spec.OpConst:
		return goConst(e)
	case spec.OpVar:
		return "v." + e.Var.Name
	case spec.OpParam:
		return "p." + e.Param.Name
	case spec.OpNot:
		return "!" + goExpr(e.Args[0])
	case spec.OpAnd:
		return args(" && ")
	case spec.OpOr:
		return args(" || ")
	case spec.OpEq:
		return args(" == ")
	case spec.OpLt:
		return args(" < ")
	case spec.OpLe:
		return args(" <= ")
	case spec.OpMin:
		return "min" + args(", ")
	case spec.OpMax:
		return "max" + args(", ")
	case spec.OpIf:
		return "choose" + args(", ")
	}
	panic(fmt.Sprintf("gen: operator %d has no Go rendering", e.Op))
}

func goConst(e spec.Expr) string {
	switch {
	case e.Domain == nil || e.Domain.Kind == spec.Int:
		return fmt.Sprint(e.Value)
	case e.Domain.Kind == spec.Bool:
		return fmt.Sprint(e.Value == 1)
	default:
		return e.Domain.Name + e.Domain.Values[e.Value]
	}
}

// tlaExpr renders e as TLA+: variables are fields of the record r,
// parameters fields of the parameter record e.
func tlaExpr(e spec.Expr) string {
	args := func(sep string) string {
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = tlaExpr(a)
		}
		return "(" + strings.Join(parts, sep) + ")"
	}
	switch e.Op {
	case spec.OpConst:
		return tlaConst(e)
	case spec.OpVar:
		return "r." + lowerFirst(e.Var.Name)
	case spec.OpParam:
		return "e." + lowerFirst(e.Param.Name)
	case spec.OpNot:
		return "~" + tlaExpr(e.Args[0])
	case spec.OpAnd:
		return args(" /\\ ")
	case spec.OpOr:
		return args(" \\/ ")
	case spec.OpEq:
		return args(" = ")
	case spec.OpLt:
		return args(" < ")
	case spec.OpLe:
		return args(" <= ")
	case spec.OpMin:
		return "Min" + args(", ")
	case spec.OpMax:
		return "Max" + args(", ")
	case spec.OpIf:
		return fmt.Sprintf("(IF %s THEN %s ELSE %s)", tlaExpr(e.Args[0]), tlaExpr(e.Args[1]), tlaExpr(e.Args[2]))
	}
	panic(fmt.Sprintf("gen: operator %d has no TLA+ rendering", e.Op))
}

func tlaConst(e spec.Expr) string {
	switch {
	case e.Domain == nil || e.Domain.Kind == spec.Int:
		return fmt.Sprint(e.Value)
	case e.Domain.Kind == spec.Bool:
		if e.Value == 1 {
			return "TRUE"
		}
		return "FALSE"
	default:
		return fmt.Sprintf("%q", e.Domain.Values[e.Value])
	}
}

func lowerFirst(s string) string {
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}
