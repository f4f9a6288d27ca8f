package admission

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

const mi = 1 << 20

func TestPodRequests(t *testing.T) {
	tests := []struct {
		name     string
		init     []v1.Container
		regular  []v1.Container
		overhead v1.ResourceList
		podLevel *v1.ResourceRequirements
		want     Resources
	}{
		{name: "no containers", want: Resources{}},
		{name: "no requests", regular: []v1.Container{{}}, want: Resources{}},
		{
			name:    "regular containers add up",
			regular: []v1.Container{ctr("100m", "64Mi"), ctr("250m", "128Mi")},
			want:    Resources{MilliCPU: 350, Memory: 192 * mi},
		},
		{
			name:    "fractional cores are millicores",
			regular: []v1.Container{ctr("0.5", "1Gi")},
			want:    Resources{MilliCPU: 500, Memory: 1024 * mi},
		},
		{
			name:    "limits only count as requests",
			regular: []v1.Container{limitsOnly("1", "256Mi"), ctr("100m", "")},
			want:    Resources{MilliCPU: 1100, Memory: 256 * mi},
		},
		{
			name: "a request wins over its limit, per resource",
			regular: []v1.Container{{Resources: v1.ResourceRequirements{
				Requests: list("100m", ""), Limits: list("2", "512Mi"),
			}}},
			want: Resources{MilliCPU: 100, Memory: 512 * mi},
		},
		{
			name:    "init containers take the maximum, not the sum",
			init:    []v1.Container{ctr("300m", "10Mi"), ctr("200m", "20Mi")},
			regular: []v1.Container{ctr("100m", "1Mi")},
			want:    Resources{MilliCPU: 300, Memory: 20 * mi},
		},
		{
			name:    "init and regular phases compared per resource",
			init:    []v1.Container{ctr("2", "1Mi")},
			regular: []v1.Container{ctr("100m", "64Mi"), ctr("100m", "64Mi")},
			want:    Resources{MilliCPU: 2000, Memory: 128 * mi},
		},
		{
			name:    "init container with limits only",
			init:    []v1.Container{limitsOnly("3", "")},
			regular: []v1.Container{ctr("1", "")},
			want:    Resources{MilliCPU: 3000},
		},
		{
			name:    "sidecars add to the regular containers",
			init:    []v1.Container{sidecar("100m", "10Mi"), sidecar("50m", "5Mi")},
			regular: []v1.Container{ctr("200m", "20Mi")},
			want:    Resources{MilliCPU: 350, Memory: 35 * mi},
		},
		{
			name:    "an init container after a sidecar runs beside it",
			init:    []v1.Container{sidecar("100m", "10Mi"), ctr("500m", "10Mi")},
			regular: []v1.Container{ctr("200m", "10Mi")},
			want:    Resources{MilliCPU: 600, Memory: 20 * mi},
		},
		{
			name:    "an init container before a sidecar runs without it",
			init:    []v1.Container{ctr("500m", "10Mi"), sidecar("100m", "10Mi")},
			regular: []v1.Container{ctr("200m", "10Mi")},
			want:    Resources{MilliCPU: 500, Memory: 20 * mi},
		},
		{
			name:    "sidecars without regular containers",
			init:    []v1.Container{sidecar("1", ""), sidecar("1", "")},
			regular: []v1.Container{},
			want:    Resources{MilliCPU: 2000},
		},
		{
			name:     "overhead comes on top of the larger phase",
			init:     []v1.Container{ctr("1", "100Mi")},
			regular:  []v1.Container{ctr("200m", "10Mi")},
			overhead: list("50m", "8Mi"),
			want:     Resources{MilliCPU: 1050, Memory: 108 * mi},
		},
		{
			name:     "overhead of a pod without requests",
			regular:  []v1.Container{{}},
			overhead: list("", "8Mi"),
			want:     Resources{Memory: 8 * mi},
		},
		{
			name:     "pod-level requests replace the aggregate, overhead still added",
			regular:  []v1.Container{ctr("100m", "10Mi")},
			podLevel: &v1.ResourceRequirements{Requests: list("1", "")},
			overhead: list("10m", ""),
			want:     Resources{MilliCPU: 1010, Memory: 10 * mi},
		},
		{
			name:     "pod-level limit stands for the request when no container asks",
			regular:  []v1.Container{ctr("", "10Mi")},
			podLevel: &v1.ResourceRequirements{Limits: list("2", "1Gi")},
			want:     Resources{MilliCPU: 2000, Memory: 10 * mi},
		},
		{
			name:     "pod-level limit ignored when an init container asks",
			init:     []v1.Container{limitsOnly("300m", "")},
			regular:  []v1.Container{{}},
			podLevel: &v1.ResourceRequirements{Limits: list("2", "")},
			want:     Resources{MilliCPU: 300},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := podOf("p", tt.regular...)
			pod.Spec.InitContainers = tt.init
			pod.Spec.Overhead = tt.overhead
			pod.Spec.Resources = tt.podLevel
			if got := PodRequests(pod); got != tt.want {
				t.Errorf("PodRequests = %+v, want %+v", got, tt.want)
			}
		})
	}
}
