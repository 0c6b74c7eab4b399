//go:build linux && cgo && !rpma_fake

package ibv

/*
#include <stdint.h>
#include <infiniband/verbs.h>
#include "rpma_ibv.h"
#include "rpma_inject.h"
*/
import "C"

import "unsafe"

// C's struct rpma_sweep_req is Reap, field for field.
var _ [unsafe.Sizeof(Reap{}) - unsafe.Sizeof(C.struct_rpma_sweep_req{})]byte
var _ [unsafe.Sizeof(C.struct_rpma_sweep_req{}) - unsafe.Sizeof(Reap{})]byte

// Poll polls the first n CQs of s in one crossing (rpma_poll_many):
// Reqs[i]'s CQ into its buffer, up to its room, with Got[i] set to how
// many completions it got, or -1 when its poll failed with none (PollError
// then says what).
func (s *Sweep) Poll(n int) {
	if n <= 0 {
		return
	}
	n = min(n, len(s.Reqs))
	C.rpma_poll_many(C.uintptr_t(uintptr(unsafe.Pointer(&s.Reqs[0]))), C.uintptr_t(uintptr(unsafe.Pointer(&s.Got[0]))), C.int(n))
}
