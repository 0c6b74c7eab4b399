package common

import (
	"io"
	"os"
)

// stderr is where the helpers report what librpma's examples print on
// stderr (a variable for the tests).
var stderr io.Writer = os.Stderr
