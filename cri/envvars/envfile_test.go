package envvars

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

var envFileCases = []struct {
	name, content, key string
	want               string
	err                string // "" for none
}{
	{name: "first of several", content: "A='1'\nB='2'\n", key: "A", want: "1"},
	{name: "leading blanks", content: "  A='1'\n\t\tB='2'\n", key: "B", want: "2"},
	{name: "blank and comment lines", content: "# note\n\n   \n  # indented note\nA='1'\n", key: "A", want: "1"},
	{name: "literal content", content: `A='$HOME "x" \n $(y) # not a comment'` + "\n", key: "A", want: `$HOME "x" \n $(y) # not a comment`},
	{name: "multi-line value", content: "A='one\n  two\nthree'\nB='b'\n", key: "A", want: "one\n  two\nthree"},
	{name: "key after a multi-line value", content: "A='one\nB=x'\nB='b'\n", key: "B", want: "b"},
	{name: "comment after the quote", content: "A='1'   # why\n", key: "A", want: "1"},
	{name: "blank after '=' is empty", content: "A= '1'\n", key: "A", want: ""},
	{name: "blank after '=' skipped for another key", content: "A= '1'\nB='2'\n", key: "B", want: "2"},
	{name: "first assignment wins", content: "A='1'\nA='2'\n", key: "A", want: "1"},
	{name: "key missing", content: "A='1'\n", key: "B", want: ""},
	{name: "empty file", content: "", key: "A", want: ""},
	{name: "no newline at the end", content: "A='1'", key: "A", want: "1"},
	{name: "later lines not read", content: "A='1'\nnot an assignment\n", key: "A", want: "1"},
	{name: "equals sign in value", content: "A='x=y'\n", key: "A", want: "x=y"},
	{name: "missing '='", content: "A='1'\nJUNK\n", key: "B", err: "line 2: missing '='"},
	{name: "empty name", content: "='1'\n", key: "A", err: "line 1: empty variable name"},
	{name: "blank before '='", content: "A ='1'\n", key: "A", err: "line 1: whitespace before '=' is not allowed"},
	{name: "unquoted", content: "A=1\n", key: "A", err: "line 1: value must be enclosed in single quotes"},
	{name: "double quotes", content: `A="1"` + "\n", key: "A", err: "line 1: value must be enclosed in single quotes"},
	{name: "content after the quote", content: "A='1'x\n", key: "A", err: "line 1: unexpected content after closing quote"},
	{name: "unclosed quote", content: "A='1'\nB='2\nC=3\n", key: "C", err: "starting at line 2: unclosed single quote"},
	{name: "line too long", content: "A='" + strings.Repeat("x", MaxEnvFileLine) + "'\n", key: "A", err: "token too long"},
}

// The env file parser, case by case: values, the lines it skips, and each
// error with its line.
func TestEnvFileValue(t *testing.T) {
	for _, tc := range envFileCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EnvFileValue(strings.NewReader(tc.content), tc.key)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v, want %q", err, tc.want)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("value %q, error %v; want an error with %q", got, err, tc.err)
			case got != tc.want:
				t.Errorf("%s = %q, want %q", tc.key, got, tc.want)
			}
		})
	}
}

// The valid cases mean what a POSIX shell makes of the file, as the
// kubelet's test checks: bash --posix sourcing it gives the same value.
func TestEnvFileValueAsTheShell(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to compare with")
	}
	for _, tc := range envFileCases {
		if tc.err != "" || tc.name == "first assignment wins" || tc.name == "later lines not read" || strings.Contains(tc.content, "= ") {
			// The shell takes the last assignment, fails on junk, and
			// runs what follows "NAME= " as a command.
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "env")
			if err := os.WriteFile(file, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bash, "--posix", "-c", `set -a && . "$1" && printf '%s' "${`+tc.key+`}"`, "sh", file).CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v: %s", err, out)
			}
			if string(out) != tc.want {
				t.Errorf("bash says %s = %q, the parser %q", tc.key, out, tc.want)
			}
		})
	}
}

// fileEnvPod is envPod whose container takes env from files of the
// emptyDir "config" (and names a hostPath "host" and a missing "nope").
func fileEnvPod(env ...v1.EnvVar) *v1.Pod {
	pod := envPod(env...)
	pod.Spec.Volumes = []v1.Volume{
		{Name: "config", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/etc"}}},
	}
	return pod
}

func fileEnv(name, volume, path, key string, optional *bool) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{
		VolumeName: volume, Path: path, Key: key, Optional: optional}}}
}

// fileKeyRef resolved against an emptyDir's directory: the value, an
// optional key left out, and the container's failure (its message, as
// the kubelet's where it has one) for everything else.
func TestContainerEnvFileKeyRef(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	for name, content := range map[string]string{
		"config.env":     "CONFIG_1='value1'\nEMPTY=''\nBLANK= 'x'\n",
		"sub/nested.env": "N='nested'\n",
		"bad.env":        "CONFIG_1=value1\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.env"), []byte("S='stolen'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.env"), filepath.Join(dir, "escape.env")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/nested.env", filepath.Join(dir, "inside.env")); err != nil {
		t.Fatal(err)
	}
	yes, no := new(true), new(false)
	for _, tc := range []struct {
		name  string
		env   []v1.EnvVar
		dirs  map[string]string
		want  string   // the container's variables, NAME=value by line
		error []string // the error's parts, if it fails
	}{
		{name: "value", env: []v1.EnvVar{fileEnv("C", "config", "config.env", "CONFIG_1", nil)}, want: "C=value1"},
		{name: "nested path", env: []v1.EnvVar{fileEnv("N", "config", "sub/nested.env", "N", nil)}, want: "N=nested"},
		{name: "symbolic link inside the volume", env: []v1.EnvVar{fileEnv("N", "config", "inside.env", "N", nil)}, want: "N=nested"},
		{name: "expanded by a later value", env: []v1.EnvVar{
			fileEnv("C", "config", "config.env", "CONFIG_1", no), {Name: "D", Value: "got $(C)"}}, want: "C=value1\nD=got value1"},
		{name: "optional missing key left out", env: []v1.EnvVar{
			fileEnv("C", "config", "config.env", "CONFIG_1", nil), fileEnv("M", "config", "config.env", "MISSING", yes)}, want: "C=value1"},
		{name: "optional empty value left out", env: []v1.EnvVar{fileEnv("E", "config", "config.env", "EMPTY", yes)}, want: ""},
		{name: "missing key", env: []v1.EnvVar{fileEnv("M", "config", "config.env", "MISSING", nil)},
			error: []string{"env M", `environment variable key "MISSING" not found in file "` + filepath.Join(dir, "config.env") + `"`}},
		{name: "empty value is a missing key", env: []v1.EnvVar{fileEnv("E", "config", "config.env", "EMPTY", nil)},
			error: []string{`environment variable key "EMPTY" not found`}},
		{name: "blank after '=' is a missing key", env: []v1.EnvVar{fileEnv("B", "config", "config.env", "BLANK", no)},
			error: []string{`environment variable key "BLANK" not found`}},
		{name: "missing file fails even optional", env: []v1.EnvVar{fileEnv("F", "config", "none.env", "X", yes)},
			error: []string{"couldn't parse env file", "failed to open environment variable file", "none.env"}},
		{name: "invalid file", env: []v1.EnvVar{fileEnv("C", "config", "bad.env", "CONFIG_1", yes)},
			error: []string{"couldn't parse env file", "line 1: value must be enclosed in single quotes"}},
		{name: "symbolic link out of the volume", env: []v1.EnvVar{fileEnv("S", "config", "escape.env", "S", nil)},
			error: []string{"couldn't parse env file", "escape.env"}},
		{name: "backstep out of the volume", env: []v1.EnvVar{fileEnv("S", "config", "../x.env", "S", nil)},
			error: []string{"couldn't parse env file", "x.env"}},
		{name: "no such volume", env: []v1.EnvVar{fileEnv("X", "nope", "config.env", "CONFIG_1", yes)},
			error: []string{`cannot find the volume "nope" referenced by FileKeyRef`}},
		{name: "not an emptyDir", env: []v1.EnvVar{fileEnv("X", "host", "passwd", "root", nil)},
			error: []string{`the volume "host" referenced by FileKeyRef must be of type emptyDir`}},
		{name: "no directory on the node", dirs: map[string]string{}, env: []v1.EnvVar{fileEnv("X", "config", "config.env", "CONFIG_1", nil)},
			error: []string{`the volume "config" referenced by FileKeyRef has no directory on this node`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := fileEnvPod(tc.env...)
			dirs := tc.dirs
			if dirs == nil {
				dirs = map[string]string{"config": dir}
			}
			envs, err := ContainerEnv(context.Background(), Input{Pod: pod, Container: &pod.Spec.Containers[0], EmptyDirs: dirs})
			if tc.error != nil {
				if err == nil {
					t.Fatalf("envs %v, want an error", envs)
				}
				for _, w := range tc.error {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
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
