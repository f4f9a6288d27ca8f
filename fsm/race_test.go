//go:build race

package fsm

const raceDetector = true
