package testevents

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRecorder(t *testing.T) {
	a := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a", Name: "web"}}
	b := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "b", Name: "db"}}
	var r Recorder
	r.Eventf(a, v1.EventTypeNormal, "Killing", "Stopping container %s", "app")
	r.Eventf(b, v1.EventTypeWarning, "Failed", "no image")
	r.Eventf(a, v1.EventTypeWarning, "Failed", "exit %d", 1)
	if got := r.Reasons("a"); !slices.Equal(got, []string{"Killing", "Failed"}) {
		t.Errorf("Reasons(a) = %q", got)
	}
	if got := r.Messages("a", "Failed"); !slices.Equal(got, []string{"exit 1"}) {
		t.Errorf("Messages(a, Failed) = %q", got)
	}
	if got := r.Events()[1]; got != (Event{UID: "b", Pod: "db", Type: v1.EventTypeWarning, Reason: "Failed", Message: "no image"}) {
		t.Errorf("Events()[1] = %+v", got)
	}
	r.Reset()
	if got := r.Events(); len(got) != 0 {
		t.Errorf("after Reset: %v", got)
	}
}
