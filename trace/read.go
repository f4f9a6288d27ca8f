package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/podlife/podlife/internal/jsonline"
)

// Line is one line of a trace.
type Line struct {
	Seq      uint64 `json:"seq"`
	Pod      string `json:"pod"`
	FullName string `json:"fullName"`
	Event    string `json:"event"`
	Row      string `json:"row"`
	From     string `json:"from"`
	To       string `json:"to"`
	Batch    uint64 `json:"batch"`
	Params   Params `json:"params"`
	Vars     Vars   `json:"vars"`
}

// Params are the event's parameters as written (fsm.Params).
type Params struct {
	Static          bool  `json:"static"`
	Deleting        bool  `json:"deleting"`
	TerminalPhase   bool  `json:"terminalPhase"`
	RuntimeTerminal bool  `json:"runtimeTerminal"`
	GraceOverride   int64 `json:"graceOverride"`
	SpecGrace       int64 `json:"specGrace"`
	Notify          bool  `json:"notify"`
	Evict           bool  `json:"evict"`
	Orphan          bool  `json:"orphan"`
	SlotFree        bool  `json:"slotFree"`
	FirstInLine     bool  `json:"firstInLine"`
}

// Vars are the record's variables after the row, as written (fsm.Vars);
// enums by name.
type Vars struct {
	Static           bool   `json:"static"`
	HasConfig        bool   `json:"hasConfig"`
	Started          bool   `json:"started"`
	Deleted          bool   `json:"deleted"`
	Evicted          bool   `json:"evicted"`
	RestartRequested bool   `json:"restartRequested"`
	ObservedRuntime  bool   `json:"observedRuntime"`
	Grace            int64  `json:"grace"`
	Pending          string `json:"pending"`
	InFlight         string `json:"inFlight"`
	Waiters          bool   `json:"waiters"`
}

var (
	lineKeys   = []string{"seq", "pod", "fullName", "event", "row", "from", "to", "batch", "params", "vars"}
	paramsKeys = []string{"static", "deleting", "terminalPhase", "runtimeTerminal", "graceOverride", "specGrace", "notify", "evict", "orphan", "slotFree", "firstInLine"}
	varsKeys   = []string{"static", "hasConfig", "started", "deleted", "evicted", "restartRequested", "observedRuntime", "grace", "pending", "inFlight", "waiters"}
)

// Read parses an NDJSON trace. Every line must be one object with exactly
// the fields a Writer writes (none missing, none unknown); blank lines are
// skipped.
func Read(r io.Reader) ([]Line, error) {
	return jsonline.Read(r, "trace", parseLine)
}

func parseLine(text []byte) (Line, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(text, &raw); err != nil {
		return Line{}, err
	}
	if err := jsonline.SameKeys("", raw, lineKeys); err != nil {
		return Line{}, err
	}
	for _, sub := range []struct {
		name string
		keys []string
	}{{"params", paramsKeys}, {"vars", varsKeys}} {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw[sub.name], &obj); err != nil {
			return Line{}, fmt.Errorf("%s: %w", sub.name, err)
		}
		if err := jsonline.SameKeys(sub.name+".", obj, sub.keys); err != nil {
			return Line{}, err
		}
	}
	var l Line
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Line{}, err
	}
	return l, nil
}

// sameKeys reports fields that are missing or unknown.
