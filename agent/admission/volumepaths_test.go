package admission

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The API server's rules for the paths of volume files, with the field
// path of each bad one.
func TestVolumePaths(t *testing.T) {
	downward := func(paths ...string) v1.VolumeSource {
		var items []v1.DownwardAPIVolumeFile
		for _, p := range paths {
			items = append(items, v1.DownwardAPIVolumeFile{Path: p, FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}})
		}
		return v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: items}}
	}
	keys := func(paths ...string) []v1.KeyToPath {
		var items []v1.KeyToPath
		for _, p := range paths {
			items = append(items, v1.KeyToPath{Key: "k", Path: p})
		}
		return items
	}
	tests := []struct {
		name string
		src  v1.VolumeSource
		want []string // "": admitted
	}{
		{name: "plain names", src: downward("name", "labels/app", "a..b", "x/..hidden")},
		{name: "..data", src: downward("ok", "..data"),
			want: []string{`spec.volumes[0].downwardAPI.items[1].path: Invalid value: "..data": must not start with '..'`}},
		{name: "..2026_01_01", src: downward("..2026_01_01/name"),
			want: []string{`spec.volumes[0].downwardAPI.items[0].path: Invalid value: "..2026_01_01/name": must not start with '..'`}},
		{name: "backstep", src: downward("a/../../etc"),
			want: []string{`spec.volumes[0].downwardAPI.items[0].path: Invalid value: "a/../../etc": must not contain '..'`}},
		{name: "absolute", src: downward("/etc/passwd"),
			want: []string{`spec.volumes[0].downwardAPI.items[0].path: Invalid value: "/etc/passwd": must be a relative path`}},
		{name: "empty", src: downward(""), want: []string{`spec.volumes[0].downwardAPI.items[0].path: Required value`}},
		{name: "secret", src: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s", Items: keys("..data")}},
			want: []string{`spec.volumes[0].secret.items[0].path: Invalid value: "..data"`}},
		{name: "configMap", src: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Items: keys("ok", "../up")}},
			want: []string{`spec.volumes[0].configMap.items[1].path: Invalid value: "../up": must not contain '..'`}},
		{name: "projected, every source", src: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{DownwardAPI: &v1.DownwardAPIProjection{Items: downward("..data").DownwardAPI.Items}},
			{Secret: &v1.SecretProjection{Items: keys("/abs")}},
			{ConfigMap: &v1.ConfigMapProjection{Items: keys("..x")}},
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "../token"}},
		}}}, want: []string{
			`spec.volumes[0].projected.sources[0].downwardAPI.items[0].path: Invalid value: "..data": must not start with '..'`,
			`spec.volumes[0].projected.sources[1].secret.items[0].path: Invalid value: "/abs": must be a relative path`,
			`spec.volumes[0].projected.sources[2].configMap.items[0].path: Invalid value: "..x": must not start with '..'`,
			`spec.volumes[0].projected.sources[3].serviceAccountToken.path: Invalid value: "../token": must not contain '..'`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := podOf("p", ctr("", ""))
			p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: tt.src}}
			got := VolumePaths().Admit(p, nil)
			if len(tt.want) == 0 {
				if !got.Admit {
					t.Errorf("rejected: %+v", got)
				}
				return
			}
			if got.Admit || got.Reason != ReasonInvalidVolumePath {
				t.Fatalf("Admit = %+v, want %s", got, ReasonInvalidVolumePath)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q lacks %q", got.Message, w)
				}
			}
		})
	}
}
