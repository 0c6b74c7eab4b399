//go:build linux && rpma_fake

package ibv_test

import "testing"

// conformanceIP is the address the conformance table connects to: any
// address reaches the fake device.
func conformanceIP(testing.TB) string { return "127.0.0.1" }
