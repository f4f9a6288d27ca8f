package main

import "strconv"

// boolPtrFlag is a boolean flag for a configuration field that is unset
// (nil) unless given, such as serializeImagePulls, whose default depends
// on another field.
type boolPtrFlag struct{ v **bool }

func (f boolPtrFlag) String() string {
	if *f.v == nil {
		return ""
	}
	return strconv.FormatBool(**f.v)
}

func (f boolPtrFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*f.v = &b
	return nil
}

func (f boolPtrFlag) Type() string { return "bool" }

// IsBoolFlag lets --flag stand for --flag=true.
func (f boolPtrFlag) IsBoolFlag() bool { return true }
