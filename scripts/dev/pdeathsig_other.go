//go:build !linux

package main

// dieWithParent is Linux-only; elsewhere a killed parent leaves us to the terminal's signals.
func dieWithParent() {}
