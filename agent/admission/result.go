package admission

import v1 "k8s.io/api/core/v1"

// Reasons the agent's handlers return. They are the kubelet's strings, so
// that tools reading pod status or the rejection metric see the same values.
const (
	ReasonOutOfCPU     = "OutOfcpu"
	ReasonOutOfMemory  = "OutOfmemory"
	ReasonOutOfPods    = "OutOfpods"
	ReasonNodeShutdown = "NodeShutdown"
)

// Result is one handler's decision. Reason and Message are set only when
// Admit is false; they become the rejected pod's status reason and message.
type Result struct {
	Admit   bool
	Reason  string
	Message string
}

// Handler is one admission check. active are the pods that still hold node
// resources, without the candidate itself; handlers must not modify them.
type Handler interface {
	Admit(pod *v1.Pod, active []*v1.Pod) Result
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(pod *v1.Pod, active []*v1.Pod) Result

// Admit calls f.
func (f HandlerFunc) Admit(pod *v1.Pod, active []*v1.Pod) Result { return f(pod, active) }
