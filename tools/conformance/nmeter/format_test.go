package main

import (
	"strings"
	"testing"
	"time"
)

func TestFormatLine(t *testing.T) {
	start := time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)
	now := time.Date(2026, 11, 27, 21, 50, 7, 345678912, time.UTC)
	tests := []struct {
		name, format, want string
	}{
		{"the e2e_node specs' clock", "%3t", "21:50:07.345\n"},
		{"no decimals", "%t", "21:50:07\n"},
		{"microseconds", "%6t", "21:50:07.345678\n"},
		{"text around, percent", "at %1t 100%%", "at 21:50:07.3 100%\n"},
		{"timer", "%2T s", "3007.34 s\n"},
		{"carriage return", "%t%r", "21:50:07\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseFormat(tt.format)
			if err != nil {
				t.Fatalf("parseFormat(%q): %v", tt.format, err)
			}
			if got := f.line(now, start); got != tt.want {
				t.Errorf("line = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFormatRefused(t *testing.T) {
	tests := []struct {
		format, wantErr string
	}{
		{"%c", "%c"},
		{"%[mf]", "%["},
		{"%10c", "%10c"},
		{"%7t", "at most 6 decimals"},
		{"%3", "ends inside a specifier"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			_, err := parseFormat(tt.format)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseFormat(%q) = %v, want an error containing %q", tt.format, err, tt.wantErr)
			}
		})
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantDelay time.Duration
		wantSpec  string
		wantErr   bool
	}{
		{"as the specs run it", []string{"-d0", "%3t"}, 0, "%3t", false},
		{"separate value", []string{"-d", "250", "%t"}, 250 * time.Millisecond, "%t", false},
		{"default delay", []string{"%t"}, time.Second, "%t", false},
		{"negative: no pause", []string{"-d-1", "%t"}, 0, "%t", false},
		{"no format", []string{"-d0"}, 0, "", true},
		{"-d without value", []string{"-d"}, 0, "", true},
		{"not a number", []string{"-dx", "%t"}, 0, "", true},
		{"two formats", []string{"%t", "%t"}, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			delay, spec, err := parseArgs(tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseArgs(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if err == nil && (delay != tt.wantDelay || spec != tt.wantSpec) {
				t.Errorf("parseArgs(%q) = %v, %q, want %v, %q", tt.args, delay, spec, tt.wantDelay, tt.wantSpec)
			}
		})
	}
}
