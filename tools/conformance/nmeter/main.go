// Command nmeter is the part of busybox's nmeter that the node e2e suite's
// specs run, for the test images of tools/conformance-images.sh: Debian's
// busybox-static is built without the nmeter applet, and the container
// lifecycle specs (k8s.io/kubernetes test/e2e_node,
// container_lifecycle_pod_construction.go) log each container's start and
// end as `date -u +%FT$(nmeter -d0 '%3t' | head -n1)Z`, the only way busybox
// prints milliseconds.
//
//	nmeter [-d MSEC] FORMAT
//
// prints FORMAT once every MSEC milliseconds (default 1000; 0 or less: with
// no pause) until its output is closed. FORMAT is text with busybox's time
// specifiers: %Nt the wall clock (hh:mm:ss, N decimals, 0-6), %NT the time
// since the start (seconds, N decimals), %r a carriage return instead of the
// newline, %% a percent sign. busybox's system meters (%c CPU, %m memory,
// %n network, ...) are refused with an error naming the specifier, so a spec
// that needs one fails visibly instead of reading a wrong number.
//
// There is no kubelet counterpart: this is a test image's program.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	delay, spec, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "nmeter:", err)
		fmt.Fprintln(os.Stderr, "usage: nmeter [-d MSEC] FORMAT")
		os.Exit(1)
	}
	f, err := parseFormat(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nmeter:", err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	start := time.Now()
	for {
		// A closed pipe (`| head -n1`) ends the program: the write fails
		// with EPIPE, and Go's runtime then raises SIGPIPE on stdout.
		if _, err := out.WriteString(f.line(time.Now(), start)); err != nil {
			os.Exit(1)
		}
		if err := out.Flush(); err != nil {
			os.Exit(1)
		}
		if delay > 0 {
			time.Sleep(delay)
		}
	}
}

// parseArgs parses [-d MSEC] FORMAT, MSEC attached (-d0, as the specs write
// it) or not, as busybox's getopt takes it.
func parseArgs(args []string) (delay time.Duration, spec string, err error) {
	ms := 1000
	if len(args) > 0 && strings.HasPrefix(args[0], "-d") {
		v := strings.TrimPrefix(args[0], "-d")
		args = args[1:]
		if v == "" {
			if len(args) == 0 {
				return 0, "", fmt.Errorf("-d needs a number of milliseconds")
			}
			v, args = args[0], args[1:]
		}
		if ms, err = strconv.Atoi(v); err != nil {
			return 0, "", fmt.Errorf("-d %q: not a number of milliseconds", v)
		}
	}
	if len(args) != 1 {
		return 0, "", fmt.Errorf("want one FORMAT argument, got %d", len(args))
	}
	return time.Duration(max(ms, 0)) * time.Millisecond, args[0], nil
}
