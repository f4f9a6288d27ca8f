package admission

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeAffinity(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{
		v1.LabelHostname: "n1", v1.LabelOSStable: "linux", "disk": "ssd"}}}
	term := func(key string, op v1.NodeSelectorOperator, values ...string) *v1.Affinity {
		return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}}}}}
	}
	tests := []struct {
		name     string
		selector map[string]string
		affinity *v1.Affinity
		admit    bool
	}{
		{name: "neither", admit: true},
		{name: "a matching nodeSelector", selector: map[string]string{"disk": "ssd", v1.LabelHostname: "n1"}, admit: true},
		{name: "a nodeSelector for another node", selector: map[string]string{v1.LabelHostname: "n2"}},
		{name: "a nodeSelector for a label the node lacks", selector: map[string]string{"gpu": "yes"}},
		{name: "matching required affinity", affinity: term("disk", v1.NodeSelectorOpIn, "ssd", "nvme"), admit: true},
		{name: "required affinity the node fails", affinity: term("disk", v1.NodeSelectorOpNotIn, "ssd")},
		{name: "preferred affinity only", affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 1, Preference: v1.NodeSelectorTerm{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "gpu", Operator: v1.NodeSelectorOpExists}}}}}}}, admit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := podOf("p")
			p.Spec.NodeSelector, p.Spec.Affinity = tt.selector, tt.affinity
			got := NodeAffinity(func(bool) *v1.Node { return node }).Admit(p, nil)
			if got.Admit != tt.admit {
				t.Fatalf("Admit = %+v, want admit %v", got, tt.admit)
			}
			if !tt.admit && (got.Reason != "NodeAffinity" || got.Message != "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector") {
				t.Errorf("rejection %+v, want the kubelet's reason and message", got)
			}
		})
	}
}

// A pod that does not match the known node is matched against a fresh one,
// as the kubelet fetches its Node again: a label just added admits it.
func TestNodeAffinityAsksForAFreshNode(t *testing.T) {
	stale := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"disk": "hdd"}}}
	fresh := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"disk": "ssd"}}}
	var asked []bool
	h := NodeAffinity(func(f bool) *v1.Node {
		asked = append(asked, f)
		if f {
			return fresh
		}
		return stale
	})
	p := podOf("p")
	p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	if got := h.Admit(p, nil); !got.Admit || len(asked) != 2 || asked[0] || !asked[1] {
		t.Errorf("Admit = %+v, asked %v; want admitted after asking for a fresh node", got, asked)
	}
	asked = nil
	p.Spec.NodeSelector = map[string]string{"disk": "hdd"}
	if got := h.Admit(p, nil); !got.Admit || len(asked) != 1 {
		t.Errorf("Admit = %+v, asked %v; want admitted by the known node alone", got, asked)
	}
	p.Spec.NodeSelector = map[string]string{"disk": "nvme"}
	if got := h.Admit(p, nil); got.Admit || got.Reason != ReasonNodeAffinity {
		t.Errorf("Admit = %+v, want NodeAffinity", got)
	}
}
