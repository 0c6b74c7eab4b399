// Package core implements the module's C-backed objects: devices, peers,
// completion queues, connection requests, connections and endpoints. It
// owns every C object above the verbs layer (package ibv) and decides when
// each is created and destroyed; the public packages peer, cq, conn and ep
// only document and validate.
//
// # Public types are defined types over core types
//
// Each public object type is declared as a defined type over the core type
// that implements it, for example
//
//	package peer
//	type Peer core.Peer
//
// Core types have unexported fields only, so the public type exposes
// nothing but the methods its own package declares. Sibling packages of the
// module reach the implementation with a plain, compile-checked conversion,
// (*core.Peer)(p), without exported accessors, hooks or unsafe. Users
// cannot name core types, so they cannot make the conversion.
//
// # Lifetimes
//
// Every object has a lifecycle (type life): operations enter it shared,
// Close takes it exclusively after waking any goroutine blocked in a wait
// on the object, so Close may be called while another goroutine waits, and
// never frees a C object another goroutine is using. A parent refuses to
// close while children that depend on it are open (see Peer.Close).
//
// # Waiting
//
// Event channel and completion channel fds are set O_NONBLOCK; a dup of each
// is wrapped with os.NewFile, which registers it with Go's runtime poller.
// Waits go through SyscallConn().Read: the callback tries the C call and
// returns false on EAGAIN, which parks the goroutine (not an OS thread) in
// the poller. A context becomes a read deadline: its own deadline, or a
// deadline in the past when it is cancelled.
package core
