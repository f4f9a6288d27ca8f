package spec

import (
	"fmt"
	"strings"
)

// Op is the operator of an expression node.
type Op uint8

const (
	OpConst Op = iota // Value in Domain
	OpVar             // the record variable Var
	OpParam           // the event parameter Param
	OpNot             // ¬Args[0]
	OpAnd             // Args[0] ∧ Args[1] ∧ ...
	OpOr              // Args[0] ∨ Args[1] ∨ ...
	OpEq              // Args[0] = Args[1]
	OpLt              // Args[0] < Args[1] (Int)
	OpLe              // Args[0] ≤ Args[1] (Int)
	OpMin             // min(Args[0], Args[1]) (Int)
	OpMax             // max(Args[0], Args[1]) (Int)
	OpIf              // if Args[0] then Args[1] else Args[2]

	// The operators below appear only in properties (see Properties):
	// they read what a single record cannot tell.
	OpState // the record's state is one of States
	OpNext  // Args[0] evaluated after the step (TLA+'s prime)
	OpWorld // the world fact World of the pod
	OpIn    // Var's value lies in its domain
)

// World is a fact about a pod that depends on the other pods, the waiting
// order or the configuration: properties read them, guards do not.
type World uint8

const (
	// FirstInWaiting: the pod is first in its full name's waiting order.
	FirstInWaiting World = iota
	// WaitingCount: how often the pod appears in the waiting order (Int).
	WaitingCount
	// SlotHolders: how many pods hold the static-pod slot (Int).
	SlotHolders
	// StaticPod: the configuration makes the pod static.
	StaticPod
	// Synced: SyncKnownPods has run.
	Synced

	numWorlds = iota
)

var worldInfo = [numWorlds]struct {
	name string
	kind Kind
}{{"FirstInWaiting", Bool}, {"WaitingCount", Int}, {"SlotHolders", Int}, {"StaticPod", Bool}, {"Synced", Bool}}

func (w World) String() string { return worldInfo[w].name }

// Expr is a guard or update expression. It is plain data so that the
// generator can render it as Go and as TLA+, and Validate can evaluate it.
type Expr struct {
	Op     Op
	Args   []Expr
	Value  int     // OpConst
	Domain *Domain // OpConst: the constant's domain (nil for an Int literal)
	Var    *Var    // OpVar
	Param  *Param  // OpParam
	States []State // OpState
	World  World   // OpWorld
	// Schema names the table of OpState's states (nil: the pod table).
	Schema *Schema
}

// Constructors. They keep the table readable: And(V(Started), Not(P(POrphan))).

// V reads a record variable.
func V(v *Var) Expr { return Expr{Op: OpVar, Var: v} }

// P reads an event parameter.
func P(p *Param) Expr { return Expr{Op: OpParam, Param: p} }

// B is a Boolean constant.
func B(b bool) Expr {
	if b {
		return Expr{Op: OpConst, Value: 1, Domain: BoolDomain}
	}
	return Expr{Op: OpConst, Value: 0, Domain: BoolDomain}
}

// N is an integer literal.
func N(n int) Expr { return Expr{Op: OpConst, Value: n} }

// E is the named value of an enum domain.
func E(d *Domain, name string) Expr { return Expr{Op: OpConst, Value: d.Value(name), Domain: d} }

// Is compares an enum variable with one of its named values.
func Is(v *Var, name string) Expr { return Eq(V(v), E(v.Domain, name)) }

// Not negates e; a double negation cancels.
func Not(e Expr) Expr {
	if e.Op == OpNot {
		return e.Args[0]
	}
	return Expr{Op: OpNot, Args: []Expr{e}}
}

func And(es ...Expr) Expr    { return Expr{Op: OpAnd, Args: es} }
func Or(es ...Expr) Expr     { return Expr{Op: OpOr, Args: es} }
func Eq(a, b Expr) Expr      { return Expr{Op: OpEq, Args: []Expr{a, b}} }
func Lt(a, b Expr) Expr      { return Expr{Op: OpLt, Args: []Expr{a, b}} }
func Le(a, b Expr) Expr      { return Expr{Op: OpLe, Args: []Expr{a, b}} }
func Min(a, b Expr) Expr     { return Expr{Op: OpMin, Args: []Expr{a, b}} }
func Max(a, b Expr) Expr     { return Expr{Op: OpMax, Args: []Expr{a, b}} }
func If(c, a, b Expr) Expr   { return Expr{Op: OpIf, Args: []Expr{c, a, b}} }
func Implies(a, b Expr) Expr { return Or(Not(a), b) }

// In holds when the record's state is one of ss.
func In(ss ...State) Expr { return Expr{Op: OpState, States: ss} }

// InPred holds when the record's state satisfies the predicate named name.
func InPred(name string) Expr { return In(PredicateNamed(name).States...) }

// Next reads e after the step.
func Next(e Expr) Expr { return Expr{Op: OpNext, Args: []Expr{e}} }

// InDomain holds when v's value lies in its domain.
func InDomain(v *Var) Expr { return Expr{Op: OpIn, Var: v} }

// W reads a world fact of the pod.
func W(w World) Expr { return Expr{Op: OpWorld, World: w} }

// Env supplies variable and parameter values to Eval, indexed like Vars and
// Params; properties also read the state, the shell variables (indexed like
// ShellVars), the world facts and, in a step, the environment after it.
type Env struct {
	Vars   []int
	Params []int
	State  int
	Shell  []int
	World  [numWorlds]int
	Next   *Env
}

// Eval computes the expression's value (Booleans as 0 and 1).
func (e Expr) Eval(env *Env) int {
	switch e.Op {
	case OpConst:
		return e.Value
	case OpVar:
		if e.Var.Shell {
			return env.Shell[ShellVarIndex(e.Var)]
		}
		return env.Vars[VarIndex(e.Var)]
	case OpParam:
		return env.Params[ParamIndex(e.Param)]
	case OpNot:
		return 1 - e.Args[0].Eval(env)
	case OpAnd:
		for _, a := range e.Args {
			if a.Eval(env) == 0 {
				return 0
			}
		}
		return 1
	case OpOr:
		for _, a := range e.Args {
			if a.Eval(env) == 1 {
				return 1
			}
		}
		return 0
	case OpEq:
		return b2i(e.Args[0].Eval(env) == e.Args[1].Eval(env))
	case OpLt:
		return b2i(e.Args[0].Eval(env) < e.Args[1].Eval(env))
	case OpLe:
		return b2i(e.Args[0].Eval(env) <= e.Args[1].Eval(env))
	case OpMin:
		return min(e.Args[0].Eval(env), e.Args[1].Eval(env))
	case OpMax:
		return max(e.Args[0].Eval(env), e.Args[1].Eval(env))
	case OpIf:
		if e.Args[0].Eval(env) == 1 {
			return e.Args[1].Eval(env)
		}
		return e.Args[2].Eval(env)
	case OpState:
		for _, s := range e.States {
			if State(env.State) == s {
				return 1
			}
		}
		return 0
	case OpWorld:
		return env.World[e.World]
	case OpIn:
		return b2i(e.Var.Domain.Contains(V(e.Var).Eval(env)))
	case OpNext:
		if env.Next == nil {
			panic("spec: Next outside a step")
		}
		return e.Args[0].Eval(env.Next)
	}
	panic(fmt.Sprintf("spec: unknown operator %d", e.Op))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Reads adds the variables and parameters the expression reads to the sets.
func (e Expr) Reads(vars map[*Var]bool, params map[*Param]bool) {
	switch e.Op {
	case OpVar, OpIn:
		vars[e.Var] = true
	case OpParam:
		params[e.Param] = true
	}
	for _, a := range e.Args {
		a.Reads(vars, params)
	}
}

// typeOf returns the expression's kind and, for enums, its domain, or an
// error naming the ill-typed node.
func (e Expr) typeOf() (Kind, *Domain, error) {
	argTypes := func(want Kind) error {
		for _, a := range e.Args {
			k, _, err := a.typeOf()
			if err != nil {
				return err
			}
			if k != want {
				return fmt.Errorf("%s: operand %s is not %s", e, a, kindName(want))
			}
		}
		return nil
	}
	switch e.Op {
	case OpConst:
		if e.Domain == nil {
			return Int, nil, nil
		}
		return e.Domain.Kind, e.Domain, nil
	case OpVar:
		return e.Var.Domain.Kind, e.Var.Domain, nil
	case OpParam:
		return e.Param.Domain.Kind, e.Param.Domain, nil
	case OpNot, OpAnd, OpOr:
		return Bool, BoolDomain, argTypes(Bool)
	case OpState, OpIn:
		return Bool, BoolDomain, nil
	case OpWorld:
		if worldInfo[e.World].kind == Bool {
			return Bool, BoolDomain, nil
		}
		return Int, nil, nil
	case OpNext:
		return e.Args[0].typeOf()
	case OpLt, OpLe:
		return Bool, BoolDomain, argTypes(Int)
	case OpMin, OpMax:
		return Int, nil, argTypes(Int)
	case OpEq:
		ka, da, err := e.Args[0].typeOf()
		if err != nil {
			return 0, nil, err
		}
		kb, db, err := e.Args[1].typeOf()
		if err != nil {
			return 0, nil, err
		}
		if ka != kb || (ka == Enum && da != db) {
			return 0, nil, fmt.Errorf("%s: operands have different types", e)
		}
		return Bool, BoolDomain, nil
	case OpIf:
		kc, _, err := e.Args[0].typeOf()
		if err != nil {
			return 0, nil, err
		}
		if kc != Bool {
			return 0, nil, fmt.Errorf("%s: condition is not Bool", e)
		}
		ka, da, err := e.Args[1].typeOf()
		if err != nil {
			return 0, nil, err
		}
		kb, db, err := e.Args[2].typeOf()
		if err != nil {
			return 0, nil, err
		}
		if ka != kb || (ka == Enum && da != db) {
			return 0, nil, fmt.Errorf("%s: branches have different types", e)
		}
		return ka, da, nil
	}
	return 0, nil, fmt.Errorf("unknown operator %d", e.Op)
}

func kindName(k Kind) string { return [...]string{"Bool", "Enum", "Int"}[k] }

// String renders the expression in a neutral notation for messages and for
// the table hash.
func (e Expr) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

func (e Expr) write(b *strings.Builder) {
	join := func(sep string) {
		b.WriteByte('(')
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(sep)
			}
			a.write(b)
		}
		b.WriteByte(')')
	}
	switch e.Op {
	case OpConst:
		if e.Domain == nil {
			fmt.Fprint(b, e.Value)
		} else {
			b.WriteString(e.Domain.Format(e.Value))
		}
	case OpVar:
		b.WriteString(e.Var.Name)
	case OpParam:
		b.WriteString("$" + e.Param.Name)
	case OpNot:
		b.WriteString("!")
		e.Args[0].write(b)
	case OpAnd:
		join(" && ")
	case OpOr:
		join(" || ")
	case OpEq:
		join(" == ")
	case OpLt:
		join(" < ")
	case OpLe:
		join(" <= ")
	case OpMin:
		b.WriteString("min")
		join(", ")
	case OpMax:
		b.WriteString("max")
		join(", ")
	case OpIf:
		b.WriteString("if")
		join(", ")
	case OpState:
		sc := e.Schema
		if sc == nil {
			sc = PodSchema
		}
		b.WriteString("state in {")
		for i, s := range e.States {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(sc.StateName(s))
		}
		b.WriteString("}")
	case OpNext:
		b.WriteString("next")
		join("")
	case OpWorld:
		b.WriteString("@" + e.World.String())
	case OpIn:
		b.WriteString(e.Var.Name + " in " + e.Var.Domain.Name)
	}
}

var (
	varIndex   = map[*Var]int{}
	paramIndex = map[*Param]int{}
)

func init() {
	for i, v := range Vars {
		varIndex[v] = i
	}
	for i, v := range ShellVars {
		varIndex[v] = i
	}
	for i, p := range Params {
		paramIndex[p] = i
	}
}

// RegisterSchema gives the variables and parameters of a table declared
// outside this package their positions in an Env of that table (Env is
// sized by the table's schema); the table's package calls it from init.
func RegisterSchema(sc *Schema) {
	for i, v := range sc.Vars {
		varIndex[v] = i
	}
	for i, p := range sc.Params {
		paramIndex[p] = i
	}
}

// In holds when a record of sc's table is in one of the states ss.
func (sc *Schema) In(ss ...State) Expr { return Expr{Op: OpState, States: ss, Schema: sc} }

// ShellVarIndex is v's position in ShellVars.
func ShellVarIndex(v *Var) int { return varIndex[v] }

// VarIndex is v's position in Vars.
func VarIndex(v *Var) int { return varIndex[v] }

// ParamIndex is p's position in Params.
func ParamIndex(p *Param) int { return paramIndex[p] }
