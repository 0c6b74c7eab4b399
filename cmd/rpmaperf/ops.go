package main

import "github.com/gorpma/rpma/rpma"

// op is an operation rpmaperf measures.
type op int

const (
	opWrite op = iota
	opRead
	opFlushPersistent
	opFlushVisibility
	opWriteFlushPersistent
	opWriteFlushVisibility
	opAtomicWrite
	opSend
	opCAS
	opFAA
	numOps
)

// atomicSize is the size of every atomic operation.
const atomicSize = 8

var opInfo = [numOps]struct{ name, help string }{
	opWrite:                {"write", "RDMA write (conn.Conn.Write / WriteWait)"},
	opRead:                 {"read", "RDMA read (conn.Conn.Read / ReadWait)"},
	opFlushPersistent:      {"flush-persistent", "flush to persistence (conn.Conn.Flush / FlushWait, rpma.FlushPersistent)"},
	opFlushVisibility:      {"flush-visibility", "flush to global visibility (rpma.FlushVisibility)"},
	opWriteFlushPersistent: {"write-flush-persistent", "write and flush to persistence, one chain (conn.Conn.WriteAndFlush)"},
	opWriteFlushVisibility: {"write-flush-visibility", "write and flush to visibility, one chain"},
	opAtomicWrite:          {"atomic-write", "8-byte atomic write (conn.Conn.AtomicWrite / AtomicWriteWait)"},
	opSend:                 {"send", "send/recv ping-pong: the server echoes every message (conn.Conn.Send / SendWait)"},
	opCAS:                  {"cas", "8-byte remote compare-and-swap (conn.Conn.CompareAndSwap)"},
	opFAA:                  {"faa", "8-byte remote fetch-and-add (conn.Conn.FetchAndAdd)"},
}

func (o op) String() string { return opInfo[o].name }
func (o op) help() string   { return opInfo[o].help }

// atomic reports whether o moves a fixed 8-byte word.
func (o op) atomic() bool { return o == opAtomicWrite || o == opCAS || o == opFAA }

// flushType is the flush of a flush operation.
func (o op) flushType() rpma.FlushType {
	if o == opFlushVisibility || o == opWriteFlushVisibility {
		return rpma.FlushVisibility
	}
	return rpma.FlushPersistent
}

// writes reports whether o writes the remote write area (checked by
// reading it back).
func (o op) writes() bool {
	return o == opWrite || o == opWriteFlushPersistent || o == opWriteFlushVisibility
}

// sizesFor returns the sizes o runs at.
func (o op) sizesFor(sizes []int) []int {
	if o.atomic() {
		return []int{atomicSize}
	}
	return sizes
}

func allOps() []op {
	ops := make([]op, numOps)
	for i := range ops {
		ops[i] = op(i)
	}
	return ops
}

func opNames() []string {
	names := make([]string, numOps)
	for i := range names {
		names[i] = op(i).String()
	}
	return names
}

func opByName(name string) (op, bool) {
	for i := range numOps {
		if op(i).String() == name {
			return op(i), true
		}
	}
	return 0, false
}
