package apistatus

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri"
)

// Container states as Generate reports them.
var (
	csRunning  = v1.ContainerStatus{State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
	csCreating = v1.ContainerStatus{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
)

func csExited(code int32) v1.ContainerStatus {
	return v1.ContainerStatus{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}}
}

// csCrashLoop is a container waiting for its restart after exiting with code.
func csCrashLoop(code int32) v1.ContainerStatus {
	return v1.ContainerStatus{
		State:                v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}},
	}
}

// kubeletPod is a pod as the kubelet's getPhase sees it: each init
// container's status, whether it is restartable, and the regular
// containers' statuses; initSpecs and specs (index for index, nil entries
// allowed) hold the containers' own restartPolicy and restartPolicyRules.
type kubeletPod struct {
	policy      v1.RestartPolicy
	initInfo    []v1.ContainerStatus
	restartable []bool // restartable[i]: initInfo[i] is a sidecar's
	initSpecs   []*v1.Container
	info        []v1.ContainerStatus
	specs       []*v1.Container
}

// shouldRestart is the kubelet's ContainerShouldRestart for the i-th of
// specs.
func (pod kubeletPod) shouldRestart(specs []*v1.Container, i int, exitCode int32) bool {
	c := &v1.Container{}
	if i < len(specs) && specs[i] != nil {
		c = specs[i]
	}
	return cri.ContainerShouldRestart(&v1.PodSpec{RestartPolicy: pod.policy}, c, exitCode)
}

// kubeletPhase transcribes the kubelet's rules: getPhase
// (pkg/kubelet/kubelet_pods.go) with the ContainerRestartRules feature on,
// given whether a regular container started (podHasInitialized), and for a
// terminal pod the status manager's TerminatePod, which turns a phase that
// is not terminal into Failed.
func kubeletPhase(pod kubeletPod, podIsTerminal, podHasInitialized bool) v1.PodPhase {
	pendingRegularInit, pendingRestartableInit, failedInitNotRestartable := 0, 0, 0
	unknown, running, waiting, stopped, stoppedNotRestartable, succeeded := 0, 0, 0, 0, 0, 0
	for i, cs := range pod.initInfo {
		if pod.restartable[i] {
			switch {
			case cs.State.Running != nil:
				running++ // always started: there are no startup probes
			case cs.State.Terminated != nil:
			case cs.State.Waiting != nil:
				if cs.LastTerminationState.Terminated == nil {
					pendingRestartableInit++
				}
			default:
				pendingRestartableInit++
				unknown++
			}
			continue
		}
		switch {
		case cs.State.Running != nil:
			pendingRegularInit++
		case cs.State.Terminated != nil:
			if code := cs.State.Terminated.ExitCode; code != 0 && !pod.shouldRestart(pod.initSpecs, i, code) {
				failedInitNotRestartable++
			}
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated == nil {
				pendingRegularInit++
			} else if code := cs.LastTerminationState.Terminated.ExitCode; code != 0 && !pod.shouldRestart(pod.initSpecs, i, code) {
				failedInitNotRestartable++
			}
		default:
			pendingRegularInit++
		}
	}
	for i, cs := range pod.info {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if !pod.shouldRestart(pod.specs, i, cs.State.Terminated.ExitCode) {
				stoppedNotRestartable++
			}
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated != nil {
				stopped++
				if !pod.shouldRestart(pod.specs, i, cs.LastTerminationState.Terminated.ExitCode) {
					stoppedNotRestartable++
				}
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}
	var phase v1.PodPhase
	switch {
	case failedInitNotRestartable > 0:
		phase = v1.PodFailed
	case pendingRegularInit > 0 || (pendingRestartableInit > 0 && !podHasInitialized) || waiting > 0:
		phase = v1.PodPending
	case running > 0 && unknown == 0:
		phase = v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		switch {
		case podIsTerminal && stopped == succeeded:
			phase = v1.PodSucceeded
		case podIsTerminal:
			phase = v1.PodFailed
		case stopped != stoppedNotRestartable:
			phase = v1.PodRunning
		case stopped == succeeded:
			phase = v1.PodSucceeded
		default:
			phase = v1.PodFailed
		}
	default:
		phase = v1.PodPending
	}
	if podIsTerminal && phase != v1.PodSucceeded && phase != v1.PodFailed {
		phase = v1.PodFailed
	}
	return phase
}

// kubeletFinalPhase is the phase the kubelet ends a pod in. It judges a
// terminal pod once it stopped its containers: a Never or OnFailure pod
// whose regular containers completed has its sidecars killed first, and is
// then Succeeded or Failed by its regular containers alone. podlife reports
// that final phase at once, while the sidecars still run: it knows
// termination will stop them.
func kubeletFinalPhase(pod kubeletPod, podIsTerminal, podHasInitialized bool) v1.PodPhase {
	if podIsTerminal {
		stopped := make([]v1.ContainerStatus, len(pod.initInfo))
		for i, cs := range pod.initInfo {
			if pod.restartable[i] && cs.State.Running != nil {
				cs = csExited(143)
			}
			stopped[i] = cs
		}
		pod.initInfo = stopped
	}
	return kubeletPhase(pod, podIsTerminal, podHasInitialized)
}

// phaseCase is one pod to judge, with both rules: phaseInput with the
// pod's restart policy alone.
type phaseCase struct {
	policy                      v1.RestartPolicy
	inits, sidecars, containers []v1.ContainerStatus
	initSpecs, containerSpecs   []*v1.Container
	initialized, terminal       bool
}

func (c phaseCase) ours() v1.PodPhase {
	return phase(phaseInput{
		spec:  &v1.PodSpec{RestartPolicy: c.policy},
		inits: c.inits, sidecars: c.sidecars, containers: c.containers,
		initSpecs: c.initSpecs, containerSpecs: c.containerSpecs,
		initialized: c.initialized, terminal: c.terminal,
	})
}

// kubelet's pod lists the sidecars first; their order does not matter to
// either function.
func (c phaseCase) kubelet() v1.PodPhase {
	pod := kubeletPod{policy: c.policy, info: c.containers, specs: c.containerSpecs}
	for _, cs := range c.sidecars {
		pod.initInfo, pod.restartable = append(pod.initInfo, cs), append(pod.restartable, true)
		pod.initSpecs = append(pod.initSpecs, nil)
	}
	for i, cs := range c.inits {
		pod.initInfo, pod.restartable = append(pod.initInfo, cs), append(pod.restartable, false)
		var spec *v1.Container
		if i < len(c.initSpecs) {
			spec = c.initSpecs[i]
		}
		pod.initSpecs = append(pod.initSpecs, spec)
	}
	return kubeletFinalPhase(pod, c.terminal, c.initialized)
}

func (c phaseCase) String() string {
	return fmt.Sprintf("%s terminal=%v initialized=%v inits=%s sidecars=%s containers=%s", c.policy, c.terminal, c.initialized,
		describeStatuses(c.inits), describeStatuses(c.sidecars), describeStatuses(c.containers))
}

func statuses(cs ...v1.ContainerStatus) []v1.ContainerStatus { return cs }

func TestPhase(t *testing.T) {
	always, onFailure, never := v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever
	run, creating, ok, crash := csRunning, csCreating, csExited(0), csCrashLoop(1)
	for _, tc := range []struct {
		name string
		pod  phaseCase
		want v1.PodPhase
	}{
		{"no container yet", phaseCase{policy: always}, v1.PodPending},
		{"creating", phaseCase{policy: always, containers: statuses(creating, creating)}, v1.PodPending},
		{"one running, one creating", phaseCase{policy: always, containers: statuses(run, creating)}, v1.PodPending},
		{"all running", phaseCase{policy: never, containers: statuses(run, run)}, v1.PodRunning},
		{"running and succeeded", phaseCase{policy: never, containers: statuses(run, ok)}, v1.PodRunning},
		{"running and failed, Never", phaseCase{policy: never, containers: statuses(run, csExited(1))}, v1.PodRunning},
		{"running and crash-looping", phaseCase{policy: always, containers: statuses(run, crash)}, v1.PodRunning},
		{"crash-looping alone", phaseCase{policy: always, containers: statuses(crash)}, v1.PodRunning},
		{"crash-looping after exit 0", phaseCase{policy: always, containers: statuses(csCrashLoop(0))}, v1.PodRunning},
		{"crash-looping, OnFailure", phaseCase{policy: onFailure, containers: statuses(crash, ok)}, v1.PodRunning},
		{"all succeeded, Always", phaseCase{policy: always, containers: statuses(ok, ok)}, v1.PodRunning},
		{"all succeeded, OnFailure", phaseCase{policy: onFailure, containers: statuses(ok, ok)}, v1.PodSucceeded},
		{"all succeeded, Never", phaseCase{policy: never, containers: statuses(ok, ok)}, v1.PodSucceeded},
		{"one failed, Never", phaseCase{policy: never, containers: statuses(ok, csExited(2))}, v1.PodFailed},
		{"one failed, OnFailure", phaseCase{policy: onFailure, containers: statuses(ok, csExited(2))}, v1.PodRunning},
		{"all failed, Always", phaseCase{policy: always, containers: statuses(csExited(1), csExited(137))}, v1.PodRunning},
		{"creating and exited", phaseCase{policy: never, containers: statuses(ok, creating)}, v1.PodPending},

		{"terminal, all succeeded, Always", phaseCase{policy: always, containers: statuses(ok, ok), terminal: true}, v1.PodSucceeded},
		{"terminal, all succeeded, Never", phaseCase{policy: never, containers: statuses(ok), terminal: true}, v1.PodSucceeded},
		{"terminal, one failed", phaseCase{policy: onFailure, containers: statuses(ok, csExited(143)), terminal: true}, v1.PodFailed},
		{"terminal, crash-looping after exit 0", phaseCase{policy: always, containers: statuses(csCrashLoop(0)), terminal: true}, v1.PodFailed},
		{"terminal, never started", phaseCase{policy: always, containers: statuses(ok, creating), terminal: true}, v1.PodFailed},
		{"terminal, still running", phaseCase{policy: always, containers: statuses(run), terminal: true}, v1.PodFailed},
		{"terminal, no container", phaseCase{policy: never, terminal: true}, v1.PodFailed},

		// Init containers.
		{"first init container creating", phaseCase{policy: always, inits: statuses(creating, creating), containers: statuses(creating)}, v1.PodPending},
		{"init container running", phaseCase{policy: never, inits: statuses(ok, run), containers: statuses(creating)}, v1.PodPending},
		{"init container crash-looping", phaseCase{policy: onFailure, inits: statuses(crash), containers: statuses(creating)}, v1.PodPending},
		{"init container failed, Never", phaseCase{policy: never, inits: statuses(ok, csExited(1)), containers: statuses(creating)}, v1.PodFailed},
		{"terminal, init container failed, Never", phaseCase{policy: never, inits: statuses(csExited(1)), containers: statuses(creating), terminal: true}, v1.PodFailed},
		{"init containers done, containers running", phaseCase{policy: never, inits: statuses(ok, ok), containers: statuses(run), initialized: true}, v1.PodRunning},
		{"init containers done, all succeeded", phaseCase{policy: never, inits: statuses(ok), containers: statuses(ok), initialized: true}, v1.PodSucceeded},
		{"terminal, init containers done, all succeeded", phaseCase{policy: never, inits: statuses(ok), containers: statuses(ok), initialized: true, terminal: true}, v1.PodSucceeded},

		// Sidecars.
		{"sidecar creating", phaseCase{policy: always, sidecars: statuses(creating), containers: statuses(creating)}, v1.PodPending},
		{"sidecar running, init container running", phaseCase{policy: always, sidecars: statuses(run), inits: statuses(run), containers: statuses(creating)}, v1.PodPending},
		{"sidecar running, containers creating", phaseCase{policy: always, sidecars: statuses(run), inits: statuses(ok), containers: statuses(creating)}, v1.PodPending},
		{"sidecar and containers running", phaseCase{policy: always, sidecars: statuses(run), containers: statuses(run), initialized: true}, v1.PodRunning},
		{"sidecar crash-looping, containers running", phaseCase{policy: always, sidecars: statuses(crash), containers: statuses(run), initialized: true}, v1.PodRunning},
		{"sidecar removed, initialized", phaseCase{policy: always, sidecars: statuses(creating), containers: statuses(run), initialized: true}, v1.PodRunning},
		{"sidecar running, containers succeeded, Never", phaseCase{policy: never, sidecars: statuses(run), containers: statuses(ok), initialized: true}, v1.PodRunning},
		{"sidecar running, containers exited, Always", phaseCase{policy: always, sidecars: statuses(run), containers: statuses(csExited(1)), initialized: true}, v1.PodRunning},
		{"sidecar exited, containers succeeded, OnFailure", phaseCase{policy: onFailure, sidecars: statuses(csExited(1)), containers: statuses(ok), initialized: true}, v1.PodSucceeded},
		// Where podlife answers before the kubelet would: see kubeletFinalPhase.
		{"terminal, sidecar still running, containers succeeded", phaseCase{policy: never, sidecars: statuses(run), containers: statuses(ok), initialized: true, terminal: true}, v1.PodSucceeded},
		{"terminal, sidecar stopped, containers succeeded", phaseCase{policy: never, sidecars: statuses(csExited(143)), containers: statuses(ok), initialized: true, terminal: true}, v1.PodSucceeded},
		{"terminal, sidecar running, a container failed", phaseCase{policy: onFailure, sidecars: statuses(run), containers: statuses(ok, csExited(1)), initialized: true, terminal: true}, v1.PodFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.pod.ours(); got != tc.want {
				t.Errorf("phase = %s, want %s", got, tc.want)
			}
			if ref := tc.pod.kubelet(); ref != tc.want {
				t.Errorf("the kubelet's rules give %s; the table says %s", ref, tc.want)
			}
		})
	}
	// The one place the transcription of getPhase alone disagrees: a
	// terminal pod whose sidecar still runs.
	pod := kubeletPod{policy: never, initInfo: statuses(run), restartable: []bool{true}, info: statuses(ok)}
	if got := kubeletPhase(pod, true, true); got != v1.PodFailed {
		t.Errorf("getPhase with a running sidecar: %s; the kubelet stops it before it judges the pod", got)
	}
}

// Every combination of up to three regular containers, one regular init
// container and one sidecar, in the states Generate produces, under
// every policy, agrees with the kubelet's rules.
func TestPhaseMatchesKubelet(t *testing.T) {
	states := []v1.ContainerStatus{csRunning, csCreating, csExited(0), csExited(1), csCrashLoop(0), csCrashLoop(1)}
	var combos [][]v1.ContainerStatus
	var rec func(prefix []v1.ContainerStatus)
	rec = func(prefix []v1.ContainerStatus) {
		combos = append(combos, prefix)
		if len(prefix) == 3 {
			return
		}
		for _, s := range states {
			rec(append(append([]v1.ContainerStatus(nil), prefix...), s))
		}
	}
	rec(nil)
	optional := [][]v1.ContainerStatus{nil}
	for _, s := range states {
		optional = append(optional, statuses(s))
	}
	for _, policy := range []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever} {
		for _, terminal := range []bool{false, true} {
			for _, initialized := range []bool{false, true} {
				for _, inits := range optional {
					for _, sidecars := range optional {
						for _, combo := range combos {
							c := phaseCase{policy: policy, inits: inits, sidecars: sidecars, containers: combo, initialized: initialized, terminal: terminal}
							if got, want := c.ours(), c.kubelet(); got != want {
								t.Errorf("%s: phase %s, kubelet %s", c, got, want)
							}
						}
					}
				}
			}
		}
	}
}

func describeStatuses(statuses []v1.ContainerStatus) string {
	var out []string
	for _, cs := range statuses {
		switch {
		case cs.State.Running != nil:
			out = append(out, "running")
		case cs.State.Terminated != nil:
			out = append(out, fmt.Sprintf("exited(%d)", cs.State.Terminated.ExitCode))
		case cs.LastTerminationState.Terminated != nil:
			out = append(out, fmt.Sprintf("crashloop(%d)", cs.LastTerminationState.Terminated.ExitCode))
		default:
			out = append(out, "waiting")
		}
	}
	return "[" + strings.Join(out, " ") + "]"
}

// Containers with a restart policy and rules of their own (the
// ContainerRestartRules feature), as the conformance suite's "Container
// Restart Rules" specs and the kubelet's getPhase judge them.
func TestPhaseContainerRestartRules(t *testing.T) {
	always, onFailure, never := v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever
	own := func(p v1.ContainerRestartPolicy, rules ...v1.ContainerRestartRule) *v1.Container {
		return &v1.Container{RestartPolicy: &p, RestartPolicyRules: rules}
	}
	cNever, cAlways, cOnFailure := own(v1.ContainerRestartPolicyNever), own(v1.ContainerRestartPolicyAlways), own(v1.ContainerRestartPolicyOnFailure)
	on42 := own(v1.ContainerRestartPolicyNever, restartOn(v1.ContainerRestartRuleOnExitCodesOpIn, 42))
	notOn42 := own(v1.ContainerRestartPolicyNever, restartOn(v1.ContainerRestartRuleOnExitCodesOpNotIn, 42))
	specs := func(cs ...*v1.Container) []*v1.Container { return cs }
	for _, tc := range []struct {
		name string
		pod  phaseCase
		want v1.PodPhase
	}{
		{"Always pod, Never container failed", phaseCase{policy: always, containers: statuses(csExited(1)), containerSpecs: specs(cNever)}, v1.PodFailed},
		{"Always pod, Never container succeeded", phaseCase{policy: always, containers: statuses(csExited(0)), containerSpecs: specs(cNever)}, v1.PodSucceeded},
		{"Never pod, Always container failed", phaseCase{policy: never, containers: statuses(csCrashLoop(1)), containerSpecs: specs(cAlways)}, v1.PodRunning},
		{"Never pod, Always container succeeded", phaseCase{policy: never, containers: statuses(csExited(0)), containerSpecs: specs(cAlways)}, v1.PodRunning},
		{"Never pod, OnFailure container failed", phaseCase{policy: never, containers: statuses(csCrashLoop(1)), containerSpecs: specs(cOnFailure)}, v1.PodRunning},
		{"Never pod, OnFailure container succeeded", phaseCase{policy: never, containers: statuses(csExited(0)), containerSpecs: specs(cOnFailure)}, v1.PodSucceeded},
		{"rule In 42 matched", phaseCase{policy: never, containers: statuses(csCrashLoop(42)), containerSpecs: specs(on42)}, v1.PodRunning},
		{"rule In 42 not matched", phaseCase{policy: never, containers: statuses(csExited(1)), containerSpecs: specs(on42)}, v1.PodFailed},
		{"rule NotIn 42 matched", phaseCase{policy: always, containers: statuses(csCrashLoop(1)), containerSpecs: specs(notOn42)}, v1.PodRunning},
		{"rule NotIn 42 not matched", phaseCase{policy: always, containers: statuses(csExited(42)), containerSpecs: specs(notOn42)}, v1.PodFailed},
		{"one done, one the pod's Always", phaseCase{policy: always, containers: statuses(csExited(1), csCrashLoop(0)), containerSpecs: specs(cNever, nil)}, v1.PodRunning},
		{"one done, one running", phaseCase{policy: always, containers: statuses(csExited(1), csRunning), containerSpecs: specs(cNever, nil)}, v1.PodRunning},
		{"OnFailure pod, Never container failed, other succeeded", phaseCase{policy: onFailure, containers: statuses(csExited(1), csExited(0)), containerSpecs: specs(cNever, nil)}, v1.PodFailed},
		{"init container Never in an Always pod failed", phaseCase{policy: always, inits: statuses(csExited(1)), initSpecs: specs(cNever), containers: statuses(csCreating)}, v1.PodFailed},
		{"init container Always in a Never pod failed", phaseCase{policy: never, inits: statuses(csCrashLoop(1)), initSpecs: specs(cOnFailure), containers: statuses(csCreating)}, v1.PodPending},
		{"init container rule matched", phaseCase{policy: never, inits: statuses(csCrashLoop(42)), initSpecs: specs(on42), containers: statuses(csCreating)}, v1.PodPending},
		{"init container rule not matched", phaseCase{policy: never, inits: statuses(csExited(3)), initSpecs: specs(on42), containers: statuses(csCreating)}, v1.PodFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.pod.ours(); got != tc.want {
				t.Errorf("phase = %s, want %s", got, tc.want)
			}
			if ref := tc.pod.kubelet(); ref != tc.want {
				t.Errorf("the kubelet's rules give %s; the table says %s", ref, tc.want)
			}
		})
	}
}

// Every combination of two regular containers and one regular init
// container, each with any container-level policy or rule, in the states
// Generate produces (exit code 42 among them), under every pod policy,
// agrees with the kubelet's rules.
func TestPhaseContainerRestartRulesMatchKubelet(t *testing.T) {
	own := func(p v1.ContainerRestartPolicy, rules ...v1.ContainerRestartRule) *v1.Container {
		return &v1.Container{RestartPolicy: &p, RestartPolicyRules: rules}
	}
	policies := []*v1.Container{nil, own(v1.ContainerRestartPolicyAlways), own(v1.ContainerRestartPolicyOnFailure), own(v1.ContainerRestartPolicyNever),
		own(v1.ContainerRestartPolicyNever, restartOn(v1.ContainerRestartRuleOnExitCodesOpIn, 42)),
		own(v1.ContainerRestartPolicyOnFailure, restartOn(v1.ContainerRestartRuleOnExitCodesOpNotIn, 1))}
	states := []v1.ContainerStatus{csRunning, csCreating, csExited(0), csExited(1), csExited(42), csCrashLoop(0), csCrashLoop(1), csCrashLoop(42)}
	inits := append([][]v1.ContainerStatus{nil}, func() (out [][]v1.ContainerStatus) {
		for _, s := range states {
			out = append(out, statuses(s))
		}
		return out
	}()...)
	n := 0
	for _, policy := range []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever} {
		for _, terminal := range []bool{false, true} {
			for _, init := range inits {
				for _, ip := range policies {
					for _, s1 := range states {
						for _, p1 := range policies {
							for _, s2 := range states {
								for _, p2 := range policies {
									c := phaseCase{policy: policy, inits: init, initSpecs: []*v1.Container{ip},
										containers: statuses(s1, s2), containerSpecs: []*v1.Container{p1, p2},
										initialized: init == nil, terminal: terminal}
									n++
									if got, want := c.ours(), c.kubelet(); got != want {
										t.Fatalf("%s (init %v, containers %v %v): phase %s, kubelet %s", c, describeSpec(ip), describeSpec(p1), describeSpec(p2), got, want)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d pods judged", n)
}

func restartOn(op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) v1.ContainerRestartRule {
	return v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
}

func describeSpec(c *v1.Container) string {
	if c == nil || c.RestartPolicy == nil {
		return "pod's"
	}
	out := string(*c.RestartPolicy)
	for _, r := range c.RestartPolicyRules {
		out += fmt.Sprintf("+%s%v", r.ExitCodes.Operator, r.ExitCodes.Values)
	}
	return out
}
