package ibv

import "sync/atomic"

// ObjKind is a kind of C object that the package creates and destroys;
// LiveObjects counts the live ones.
type ObjKind int

// The kinds of counted objects.
const (
	ObjContext      ObjKind = iota // ibv_context opened by OpenDevice (not the borrowed ones)
	ObjPD                          // ibv_pd
	ObjCompChannel                 // ibv_comp_channel
	ObjCQ                          // ibv_cq
	ObjMR                          // ibv_mr
	ObjSRQ                         // ibv_srq
	ObjMW                          // ibv_mw
	ObjEventChannel                // rdma_event_channel
	ObjCMID                        // rdma_cm_id (CreateID, and the ids of connection requests)
	ObjQP                          // ibv_qp (rdma_create_qp_ex)
	ObjAddrInfo                    // rdma_addrinfo
	ObjWCBuf                       // C buffer of work completions (NewWCBuf)
	objKindCount
)

var objNames = [objKindCount]string{
	ObjContext:      "ibv_context",
	ObjPD:           "ibv_pd",
	ObjCompChannel:  "ibv_comp_channel",
	ObjCQ:           "ibv_cq",
	ObjMR:           "ibv_mr",
	ObjSRQ:          "ibv_srq",
	ObjMW:           "ibv_mw",
	ObjEventChannel: "rdma_event_channel",
	ObjCMID:         "rdma_cm_id",
	ObjQP:           "ibv_qp",
	ObjAddrInfo:     "rdma_addrinfo",
	ObjWCBuf:        "rpma_wc_buf",
}

// String returns the kind's name, that of its C type (e.g. "ibv_pd").
func (k ObjKind) String() string {
	if k < 0 || k >= objKindCount {
		return "ObjKind(?)"
	}
	return objNames[k]
}

// liveObjs counts, per kind, successful creations less successful
// destructions. Only creations and destructions touch it, never posts or
// polls.
var liveObjs [objKindCount]atomic.Int64

func objInc(k ObjKind) { liveObjs[k].Add(1) }
func objDec(k ObjKind) { liveObjs[k].Add(-1) }

// LiveObjects returns the number of live objects of each kind that has
// any (non-zero counts only), keyed by the kind's name. A build without
// cgo or on a system other than Linux creates none.
func LiveObjects() map[string]int64 {
	m := make(map[string]int64)
	for k := range liveObjs {
		if n := liveObjs[k].Load(); n != 0 {
			m[ObjKind(k).String()] = n
		}
	}
	return m
}

// LiveObjectCount returns the number of live objects of all kinds.
func LiveObjectCount() int64 {
	var n int64
	for k := range liveObjs {
		n += liveObjs[k].Load()
	}
	return n
}
