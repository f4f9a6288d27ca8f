package envvars

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeObjects is the namespace "ns" of a fake API: its ConfigMaps and
// Secrets by name; "forbidden" is refused, as the Node authorizer would.
type fakeObjects struct {
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
}

var errForbidden = errors.New(`configmaps "forbidden" is forbidden: no relationship found between node and this object`)

func (f fakeObjects) ConfigMap(_ context.Context, ns, name string) (*v1.ConfigMap, error) {
	if name == "forbidden" {
		return nil, errForbidden
	}
	if cm, ok := f.configMaps[name]; ok && ns == "ns" {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("configmap"), name)
}

func (f fakeObjects) Secret(_ context.Context, ns, name string) (*v1.Secret, error) {
	if s, ok := f.secrets[name]; ok && ns == "ns" {
		return s, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
}

var testObjects = fakeObjects{
	configMaps: map[string]*v1.ConfigMap{
		"cfg":   {ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"mode": "fast", "level": "3", "dotted.key": "d"}, BinaryData: map[string][]byte{"bin": {0}}},
		"other": {ObjectMeta: metav1.ObjectMeta{Name: "other"}, Data: map[string]string{"mode": "slow"}},
	},
	secrets: map[string]*v1.Secret{
		"creds": {ObjectMeta: metav1.ObjectMeta{Name: "creds"}, Data: map[string][]byte{"user": []byte("admin"), "pass": []byte("s3cr=t\n")}},
	},
}

func cmKey(name, key string, optional *bool) *v1.EnvVarSource {
	return &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: optional}}
}

func secretKey(name, key string, optional *bool) *v1.EnvVarSource {
	return &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: optional}}
}

func cmFrom(name, prefix string, optional *bool) v1.EnvFromSource {
	return v1.EnvFromSource{Prefix: prefix, ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: name}, Optional: optional}}
}

func secretFrom(name, prefix string, optional *bool) v1.EnvFromSource {
	return v1.EnvFromSource{Prefix: prefix, SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: name}, Optional: optional}}
}

// TestContainerEnvObjects: envFrom and the key references as the kubelet
// resolves them: envFrom first (a later source replacing an earlier one's
// variable, only a ConfigMap's data, the prefix prepended, every key
// taken as it is), then env, which replaces envFrom's variables and
// expands $(VAR) with them; a missing optional object or key leaves the
// variable out; a missing required one is the kubelet's error.
func TestContainerEnvObjects(t *testing.T) {
	yes, no := new(true), new(false)
	for _, tc := range []struct {
		name    string
		from    []v1.EnvFromSource
		env     []v1.EnvVar
		want    string // the environment, KEY=value by line
		wantErr string
	}{
		{name: "configMapKeyRef", env: []v1.EnvVar{{Name: "M", ValueFrom: cmKey("cfg", "mode", nil)}}, want: "M=fast"},
		{name: "secretKeyRef", env: []v1.EnvVar{{Name: "P", ValueFrom: secretKey("creds", "pass", no)}}, want: "P=s3cr=t\n"},
		{name: "optional, object missing", env: []v1.EnvVar{{Name: "M", ValueFrom: cmKey("none", "mode", yes)}, {Name: "S", ValueFrom: secretKey("none", "k", yes)}, {Name: "A", Value: "1"}}, want: "A=1"},
		{name: "optional, key missing", env: []v1.EnvVar{{Name: "M", ValueFrom: cmKey("cfg", "none", yes)}, {Name: "S", ValueFrom: secretKey("creds", "none", yes)}}, want: ""},
		{name: "configMapKeyRef: binaryData is not env", env: []v1.EnvVar{{Name: "B", ValueFrom: cmKey("cfg", "bin", nil)}},
			wantErr: `container "app" of pod ns/web: env B: couldn't find key bin in ConfigMap ns/cfg`},
		{name: "required key missing", env: []v1.EnvVar{{Name: "M", ValueFrom: cmKey("cfg", "none", no)}},
			wantErr: "env M: couldn't find key none in ConfigMap ns/cfg"},
		{name: "required secret key missing", env: []v1.EnvVar{{Name: "S", ValueFrom: secretKey("creds", "none", nil)}},
			wantErr: "env S: couldn't find key none in Secret ns/creds"},
		{name: "required object missing", env: []v1.EnvVar{{Name: "M", ValueFrom: cmKey("none", "mode", nil)}},
			wantErr: `env M: configmap "none" not found`},
		{name: "required secret missing", env: []v1.EnvVar{{Name: "S", ValueFrom: secretKey("none", "k", nil)}},
			wantErr: `env S: secret "none" not found`},
		{name: "optional, but refused: an error", env: []v1.EnvVar{{Name: "M", ValueFrom: cmKey("forbidden", "k", yes)}},
			wantErr: "is forbidden"},
		{name: "envFrom, sorted keys, data only", from: []v1.EnvFromSource{cmFrom("cfg", "", nil)}, want: "dotted.key=d\nlevel=3\nmode=fast"},
		{name: "envFrom with a prefix", from: []v1.EnvFromSource{cmFrom("other", "CM_", nil), secretFrom("creds", "S_", no)},
			want: "CM_mode=slow\nS_pass=s3cr=t\n\nS_user=admin"},
		{name: "a later envFrom replaces an earlier one's variable", from: []v1.EnvFromSource{cmFrom("cfg", "", nil), cmFrom("other", "", nil)},
			want: "dotted.key=d\nlevel=3\nmode=slow"},
		{name: "env replaces envFrom and expands with it", from: []v1.EnvFromSource{cmFrom("other", "", nil)},
			env:  []v1.EnvVar{{Name: "mode", Value: "was-$(mode)"}, {Name: "X", Value: "$(mode)"}},
			want: "mode=was-slow\nX=was-slow"},
		{name: "envFrom optional, missing", from: []v1.EnvFromSource{cmFrom("none", "", yes), secretFrom("none", "", yes)}, env: []v1.EnvVar{{Name: "A", Value: "1"}}, want: "A=1"},
		{name: "envFrom required, missing", from: []v1.EnvFromSource{secretFrom("none", "", nil)},
			wantErr: `container "app" of pod ns/web: envFrom: secret "none" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := envPod(tc.env...)
			pod.Spec.Containers[0].EnvFrom = tc.from
			envs, err := resolveEnv(pod)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("env %v, error %v; want an error with %q", envs, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, kv := range envs {
				got = append(got, kv.Key+"="+string(kv.Value))
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("env:\n%s\nwant:\n%s", strings.Join(got, "\n"), tc.want)
			}
		})
	}
}

// TestContainerEnvStandalone: without an API server, every object
// reference is refused with the reason, optional or not.
func TestContainerEnvStandalone(t *testing.T) {
	yes := new(true)
	for _, c := range []v1.Container{
		{Name: "app", Env: []v1.EnvVar{{Name: "M", ValueFrom: cmKey("cfg", "mode", yes)}}},
		{Name: "app", Env: []v1.EnvVar{{Name: "S", ValueFrom: secretKey("creds", "user", nil)}}},
		{Name: "app", EnvFrom: []v1.EnvFromSource{cmFrom("cfg", "", yes)}},
	} {
		pod := envPod()
		pod.Spec.Containers[0] = c
		_, err := ContainerEnv(context.Background(), Input{Pod: pod, Container: &pod.Spec.Containers[0]})
		if !errors.Is(err, ErrNoAPI) {
			t.Errorf("%+v: %v; want ErrNoAPI", c, err)
		}
	}
}
