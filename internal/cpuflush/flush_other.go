//go:build !amd64 || !cgo

package cpuflush

// Supported reports whether this build can flush CPU caches: not this one.
func Supported() bool { return false }

// Instruction returns "" in this build.
func Instruction() string { return "" }

// Flush does nothing in this build; callers check Supported first.
func Flush([]byte) {}
