//go:build !linux

package backend

func gpioSummary() string { return "GPIO probing is supported on Linux only" }
