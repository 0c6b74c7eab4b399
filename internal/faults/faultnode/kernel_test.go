//go:build linux

package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKernelProblem: the lines kernelTrouble counts, from real reports,
// and ordinary rxe lines it must not.
func TestKernelProblem(t *testing.T) {
	for _, l := range []string{
		"[   12.345678] WARNING: CPU: 1 PID: 312 at drivers/infiniband/sw/rxe/rxe_pool.c:250 __rxe_cleanup+0x5e/0x70 [rdma_rxe]",
		"[    3.1] BUG: kernel NULL pointer dereference, address: 0000000000000008",
		"[    3.2] Oops: 0000 [#1] PREEMPT SMP NOPTI",
		"[    3.3] general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP",
		"[    3.4] UBSAN: shift-out-of-bounds in drivers/infiniband/sw/rxe/rxe_qp.c:1",
		"[    3.5] refcount_t: underflow; use-after-free.",
	} {
		require.True(t, kernelProblem.MatchString(l), l)
	}
	for _, l := range []string{
		"[    9.512443] infiniband rxe0: set active",
		"[   20.789173] rxe0: pd#13 rxe_reg_user_mr: returned err = -12",
		"[   21.0] rdma_rxe: qp#17 rxe_qp_do_cleanup: Timed out waiting for qp#17 to complete",
	} {
		require.False(t, kernelProblem.MatchString(l), l)
	}
}
