package spec

import "fmt"

// Kind is the type of a variable or parameter.
type Kind uint8

const (
	// Bool values are 0 (false) and 1 (true).
	Bool Kind = iota
	// Enum values are indexes into Domain.Values.
	Enum
	// Int values are integers; the model checks them over [Min, Max].
	Int
)

// Domain is the finite set of values a variable or parameter may take. Int
// domains are unbounded in Go; [Min, Max] is the slice that Validate and the
// model checkers enumerate.
type Domain struct {
	Name   string
	Kind   Kind
	Values []string // Enum only: the value names, index = value
	Min    int      // Int only
	Max    int      // Int only
}

// Enumerate returns every value of the domain, in ascending order.
func (d *Domain) Enumerate() []int {
	switch d.Kind {
	case Bool:
		return []int{0, 1}
	case Enum:
		vs := make([]int, len(d.Values))
		for i := range vs {
			vs[i] = i
		}
		return vs
	default:
		vs := make([]int, 0, d.Max-d.Min+1)
		for v := d.Min; v <= d.Max; v++ {
			vs = append(vs, v)
		}
		return vs
	}
}

// Contains reports whether v lies in the domain.
func (d *Domain) Contains(v int) bool {
	switch d.Kind {
	case Bool:
		return v == 0 || v == 1
	case Enum:
		return v >= 0 && v < len(d.Values)
	default:
		return v >= d.Min && v <= d.Max
	}
}

// Format renders v for messages.
func (d *Domain) Format(v int) string {
	switch d.Kind {
	case Bool:
		return fmt.Sprint(v == 1)
	case Enum:
		if d.Contains(v) {
			return d.Values[v]
		}
	}
	return fmt.Sprint(v)
}

// Value returns the index of an enum value name; it panics on a name the
// domain does not have, which is a mistake in the table itself.
func (d *Domain) Value(name string) int {
	for i, v := range d.Values {
		if v == name {
			return i
		}
	}
	panic(fmt.Sprintf("spec: domain %s has no value %q", d.Name, name))
}

// The domains of the table.
var (
	BoolDomain = &Domain{Name: "Bool", Kind: Bool}

	// PendingDomain is the mailbox of a record: nothing pending, an update
	// queued for the worker, or an update parked because a static pod may not
	// start yet (kubelet: pendingUpdate set while working is false).
	PendingDomain = &Domain{Name: "Pending", Kind: Enum, Values: []string{"None", "Queued", "Parked"}}

	// InFlightDomain is the sync function the worker is running for the
	// record, if any. At most one runs per UID at a time.
	InFlightDomain = &Domain{Name: "InFlight", Kind: Enum, Values: []string{
		"None", "SyncPod", "SyncTerminatingPod", "SyncTerminatingRuntimePod", "SyncTerminatedPod",
	}}

	// GraceDomain is a grace period in seconds; 0 means not yet set. The
	// model checks 0..3; the engine uses any int64.
	GraceDomain = &Domain{Name: "Grace", Kind: Int, Min: 0, Max: 3}

	// GraceRequestDomain is a requested grace period: NoGrace (-1) when the
	// update requests none, otherwise seconds (0 is a force delete).
	GraceRequestDomain = &Domain{Name: "GraceRequest", Kind: Int, Min: NoGrace, Max: 3}

	// ChannelsDomain counts a pod's open kill completion channels; the
	// model checkers send kills only while fewer than Max are open.
	ChannelsDomain = &Domain{Name: "Channels", Kind: Int, Min: 0, Max: 3}
)

// NoGrace is the GraceOverride value of an update that requests no grace.
const NoGrace = -1

// Domains lists every domain of the table in a fixed order.
var Domains = []*Domain{BoolDomain, PendingDomain, InFlightDomain, GraceDomain, GraceRequestDomain, ChannelsDomain}
