//go:build !linux

package emu

func threadCPU() int64 { return 0 }
