package rdmatest

import (
	"fmt"
	"testing"
)

func TestCaptureStdout(t *testing.T) {
	got := captureStdout(t, func() { fmt.Println("hello"); fmt.Print("world") })
	if got != "hello\nworld" {
		t.Fatalf("got %q", got)
	}
}

func TestLastOutput(t *testing.T) {
	// This file's own examples: one of each kind (see below).
	got, unordered := deviceExamples(t)
	if len(got) != 2 || got["Example_deviceOutput"] != "first line\nsecond line\n" || unordered["Example_deviceOutput"] ||
		!unordered["Example_unordered"] {
		t.Fatalf("device examples: %q %v", got, unordered)
	}
	if norm("b\n a\n", true) != "a\nb" {
		t.Fatal("unordered lines are sorted")
	}
}

// The examples TestLastOutput parses. Example_deviceOutput is never run
// (it has no Output comment), so it does nothing.
func Example_deviceOutput() {
	// Device output:
	// first line
	// second line
}

func Example_unordered() {
	// Device output (unordered):
	// b
	// a
}

func Example_hostOutput() {
	fmt.Println("runs anywhere")
	// Output: runs anywhere
}
