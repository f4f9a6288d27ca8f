package agent

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/node"
)

// admissionNode is the node admission matches a pod's node affinity
// against, as the kubelet's admission uses its Node: in cluster mode the
// Node as the API server last returned it (with the labels others gave
// it), or with fresh as it has it now (the kubelet's synchronous get: a
// failed get gives the last one), else, and before it is registered, a
// Node with the default labels.
func (a *Agent) admissionNode(fresh bool) *v1.Node {
	if a.cluster == nil {
		return a.defaultNode()
	}
	if fresh {
		ctx, cancel := context.WithTimeout(context.Background(), freshNodeTimeout)
		defer cancel()
		n, err := a.cluster.client.CoreV1().Nodes().Get(ctx, a.cfg.NodeName, metav1.GetOptions{})
		if err == nil {
			return n
		}
		a.log.Warn("admission: cannot get the Node; matching node affinity against the last one known", "err", err)
	}
	if n, ok := a.cluster.node.Node(); ok {
		return n
	}
	return a.defaultNode()
}

// freshNodeTimeout bounds admission's get of the Node: it runs with the
// agent's pods locked.
const freshNodeTimeout = 5 * time.Second

// defaultNode is the node with the default labels a node of podlife has.
func (a *Agent) defaultNode() *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: a.cfg.NodeName, Labels: node.OwnLabels(a.cfg.NodeName, a.cfg.NodeLabels)}}
}
