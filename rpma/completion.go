package rpma

// WC is a work completion (struct ibv_wc, as librpma's rpma_cq_get_wc
// returns it): what package cq's GetWC and WaitFor and the waiting calls
// of package conn return (cq.WC is this type). For a failed completion
// only OpContext, Status, VendorErr and QPNum are defined.
//
// Its fields are in the order and sizes of the library's poll buffer, so
// a CQ polls straight into a caller's []WC.
type WC struct {
	// OpContext is the op context given to the operation (wr_id).
	OpContext uint64
	// Status is the completion status; see Err.
	Status WCStatus
	// Opcode is the kind of operation: for example WCRDMAWrite,
	// WCRDMARead (also emulated flushes), WCAtomicWrite, WCSend, WCRecv,
	// WCRecvRDMAWithImm.
	Opcode WCOpcode
	// VendorErr is the vendor error syndrome of a failed completion.
	VendorErr uint32
	// ByteLen is the number of bytes received (receives only).
	ByteLen uint32
	// Imm is the immediate data in host order, valid when Flags has
	// WCWithImm.
	Imm uint32
	// QPNum is the number of the local QP (conn.Conn.QPNum), which tells
	// connections apart on an SRQ's receive CQ.
	QPNum uint32
	// SrcQP is the remote QP number (unreliable datagram only; 0 here).
	SrcQP uint32
	// Flags are IBV_WC_* flags, for example WCWithImm.
	Flags uint32
}

// WCWithImm is the IBV_WC_WITH_IMM flag of WC.Flags: the completion
// carries immediate data (send with immediate, write with immediate).
const WCWithImm uint32 = 1 << 1

// Err returns nil for a successful completion, else a *WCError naming the
// status (errors.Is(err, ErrCompletion) holds; for a flushed work request
// also errors.Is(err, ErrWRFlushed)). It allocates only on failure.
func (w *WC) Err() error {
	if w.Status == WCSuccess {
		return nil
	}
	return &WCError{Status: w.Status, VendorErr: w.VendorErr, QPNum: w.QPNum, WRID: w.OpContext, Opcode: w.Opcode}
}
