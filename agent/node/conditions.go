package node

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	nodeutil "k8s.io/component-helpers/node/util"
)

// The Ready condition's reasons and messages, the kubelet's (nodestatus
// ReadyCondition) but for the name of the agent.
const (
	ReasonReady         = "KubeletReady"
	MessageReady        = "podlife agent is posting ready status"
	ReasonNotReady      = "KubeletNotReady"
	MessageShuttingDown = "node is shutting down"
)

// readiness is what the Ready condition is computed from.
type readiness struct {
	shuttingDown bool
	// ok, reason and message are Config.Ready's answer.
	ok              bool
	reason, message string
}

// requiredCapacity is what a node must report to be ready, as the kubelet
// requires it (without local storage capacity isolation).
var requiredCapacity = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods}

// readyCondition is the Ready condition without its times. As in the
// kubelet every problem is listed in the message; the reason is
// Config.Ready's when that is the only one.
func readyCondition(r readiness, capacity v1.ResourceList) v1.NodeCondition {
	var problems []error
	reason := ReasonNotReady
	if !r.ok {
		message := r.message
		if message == "" {
			message = "the agent is not ready"
		}
		problems = append(problems, errors.New(message))
		if r.reason != "" {
			reason = r.reason
		}
	}
	if r.shuttingDown {
		problems = append(problems, errors.New(MessageShuttingDown))
	}
	var missing []string
	for _, name := range requiredCapacity {
		if _, ok := capacity[name]; !ok {
			missing = append(missing, string(name))
		}
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Errorf("missing node capacity for resources: %s", strings.Join(missing, ", ")))
	}
	switch len(problems) {
	case 0:
		return v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: ReasonReady, Message: MessageReady}
	case 1:
	default:
		reason = ReasonNotReady
	}
	return v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionFalse, Reason: reason, Message: utilerrors.NewAggregate(problems).Error()}
}

// pressureConditions are the kubelet's pressure conditions, all False: the
// agent has no eviction manager that could say otherwise.
var pressureConditions = []v1.NodeCondition{
	{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "podlife agent has sufficient memory available"},
	{Type: v1.NodeDiskPressure, Status: v1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "podlife agent has no disk pressure"},
	{Type: v1.NodePIDPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "podlife agent has sufficient PID available"},
}

// setConditions puts want into conditions at now: the heartbeat is now;
// the transition time is kept when the status did not change, as the
// kubelet's setters do. Conditions of other types are kept; new ones are
// appended in the order of want (Ready last, as the kubelet keeps it).
func setConditions(conditions []v1.NodeCondition, want []v1.NodeCondition, now time.Time) []v1.NodeCondition {
	t := metav1.NewTime(now)
	for _, c := range want {
		c.LastHeartbeatTime = t
		c.LastTransitionTime = t
		i := slices.IndexFunc(conditions, func(have v1.NodeCondition) bool { return have.Type == c.Type })
		if i < 0 {
			conditions = append(conditions, c)
			continue
		}
		if conditions[i].Status == c.Status {
			c.LastTransitionTime = conditions[i].LastTransitionTime
		}
		conditions[i] = c
	}
	return conditions
}

// conditionsChanged reports whether two lists of conditions differ in
// anything but heartbeats (nodeConditionsHaveChanged in the kubelet).
func conditionsChanged(a, b []v1.NodeCondition) bool {
	if len(a) != len(b) {
		return true
	}
	for _, ca := range a {
		i := slices.IndexFunc(b, func(cb v1.NodeCondition) bool { return cb.Type == ca.Type })
		if i < 0 {
			return true
		}
		cb := b[i]
		ca.LastHeartbeatTime, cb.LastHeartbeatTime = metav1.Time{}, metav1.Time{}
		if !apiequality.Semantic.DeepEqual(ca, cb) {
			return true
		}
	}
	return false
}

// readyStatus is the status of node's Ready condition, Unknown without one.
func readyStatus(node *v1.Node) v1.ConditionStatus {
	if _, c := nodeutil.GetNodeCondition(&node.Status, v1.NodeReady); c != nil {
		return c.Status
	}
	return v1.ConditionUnknown
}
