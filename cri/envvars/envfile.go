package envvars

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// fileKey resolves a fileKeyRef as the kubelet's makeEnvironmentVariables
// does (the EnvFiles feature, beta and on by default since v1.35): the
// file at path in the pod's emptyDir volume is read when the container is
// created, so an init container that ran before may have written it. A
// volume that is not one of the pod's emptyDirs, a file that cannot be
// opened (optional or not: the kubelet's optional covers the key only) or
// that is not a valid env file fails the container; a key the file does
// not give, or gives an empty value, fails it too unless optional, which
// leaves the variable out. The kubelet's messages are kept; where it says
// only "couldn't parse env file", the parser's reason follows.
func (in Input) fileKey(ref *v1.FileKeySelector) (value string, skip bool, err error) {
	dir, ok := in.EmptyDirs[ref.VolumeName]
	if !ok {
		return "", false, in.noEmptyDir(ref.VolumeName)
	}
	value, err = readEnvFile(dir, ref.Path, ref.Key)
	if err != nil {
		return "", false, fmt.Errorf("couldn't parse env file: %w", err)
	}
	if value == "" {
		if ref.Optional != nil && *ref.Optional {
			return "", true, nil
		}
		return "", false, fmt.Errorf("environment variable key %q not found in file %q", ref.Key, filepath.Join(dir, ref.Path))
	}
	return value, false, nil
}

// noEmptyDir says why the volume a fileKeyRef names has no directory: the
// pod has no such volume (the kubelet's message), the volume is no
// emptyDir (the API server refuses such a pod; a static pod skips it), or
// the runtime mounts nothing (the embedded runtime).
func (in Input) noEmptyDir(name string) error {
	for _, v := range in.Pod.Spec.Volumes {
		switch {
		case v.Name != name:
		case v.EmptyDir == nil:
			return fmt.Errorf("the volume %q referenced by FileKeyRef must be of type emptyDir", name)
		default:
			return fmt.Errorf("the volume %q referenced by FileKeyRef has no directory on this node (the embedded runtime mounts no volume)", name)
		}
	}
	return fmt.Errorf("cannot find the volume %q referenced by FileKeyRef", name)
}

// readEnvFile is key's value in the env file at path beneath dir, which it
// opens without leaving dir: a ".." or a symbolic link out of the volume
// is refused (the kubelet joins them with securejoin).
func readEnvFile(dir, path, key string) (string, error) {
	f, err := os.OpenInRoot(dir, path)
	if err != nil {
		return "", fmt.Errorf("failed to open environment variable file %q: %w", filepath.Join(dir, path), err)
	}
	defer func() { _ = f.Close() }()
	v, err := EnvFileValue(f, key)
	if err != nil {
		return "", fmt.Errorf("environment variable file %q: %w", filepath.Join(dir, path), err)
	}
	return v, nil
}

// MaxEnvFileLine is the longest line of an env file, newline excluded:
// the kubelet reads it with a bufio.Scanner of the default buffer, which
// fails a longer line ("token too long").
const MaxEnvFileLine = bufio.MaxScanTokenSize

// EnvFileValue is key's value in the env file r, in the kubelet's strict
// subset of POSIX shell (pkg/kubelet/util/env ParseEnv): each assignment
// is NAME='value', the value in single quotes taken literally and
// possibly over several lines, optionally followed by blanks and a
// # comment; lines blank or starting with # (after leading blanks) are
// skipped; a blank before '=' is an error, and one after it assigns the
// empty string (as sh does with NAME= 'x'). The first assignment of key
// wins and ends the reading, so later lines are not checked; a key not
// assigned is "". A line longer than MaxEnvFileLine is an error.
func EnvFileValue(r io.Reader, key string) (string, error) {
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimLeft(sc.Text(), " \t")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, rest, ok := strings.Cut(text, "=")
		switch {
		case !ok:
			return "", envFileError(line, "missing '='")
		case strings.TrimRight(name, " \t") == "":
			return "", envFileError(line, "empty variable name")
		case strings.TrimRight(name, " \t") != name:
			return "", envFileError(line, "whitespace before '=' is not allowed")
		case strings.TrimLeft(rest, " \t") != rest:
			if name == key {
				return "", nil
			}
			continue
		case !strings.HasPrefix(rest, "'"):
			return "", envFileError(line, "value must be enclosed in single quotes")
		}
		value, err := quoted(sc, rest[1:], &line)
		if err != nil {
			return "", err
		}
		if name == key {
			return value, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("error reading environment variable file: %w", err)
	}
	return "", nil
}

// quoted reads a single-quoted value from rest (what follows the opening
// quote) and, until the closing quote, the next lines of sc, joined by
// newlines; after the closing quote only blanks and a comment may follow.
func quoted(sc *bufio.Scanner, rest string, line *int) (string, error) {
	start := *line
	var b strings.Builder
	for {
		if value, after, ok := strings.Cut(rest, "'"); ok {
			if after = strings.TrimLeft(after, " \t"); after != "" && !strings.HasPrefix(after, "#") {
				return "", envFileError(*line, "unexpected content after closing quote")
			}
			b.WriteString(value)
			return b.String(), nil
		}
		b.WriteString(rest)
		b.WriteByte('\n')
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return "", fmt.Errorf("error reading environment variable file: %w", err)
			}
			return "", fmt.Errorf("invalid environment variable format starting at line %d: unclosed single quote", start)
		}
		*line++
		rest = sc.Text()
	}
}

func envFileError(line int, why string) error {
	return fmt.Errorf("invalid environment variable format at line %d: %s", line, why)
}
