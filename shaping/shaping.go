// Package shaping emulates a network bottleneck link between a client network namespace and the host.
package shaping
