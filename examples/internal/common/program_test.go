package common

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

func TestRPMAStatus(t *testing.T) {
	require.Equal(t, 255, RPMAStatus(nil))
	require.Equal(t, 255, RPMAStatus(errors.New("not librpma's")))
	// RPMA_E_INVAL is -100004: exit status 92, as a C main returning it
	inval := fmt.Errorf("wrapped: %w", rpma.ErrInvalidArgument)
	require.Equal(t, int(rpma.CodeInval)&0xff, RPMAStatus(inval))
	require.Equal(t, 92, RPMAStatus(inval))
}

// withArgs runs f with os.Args set to args.
func withArgs(t *testing.T, args ...string) {
	old := os.Args
	os.Args = args
	t.Cleanup(func() { os.Args = old })
}

func TestArg(t *testing.T) {
	withArgs(t, "server", "192.0.2.1", "7204", "/dev/dax0.0")
	require.Equal(t, "/dev/dax0.0", Arg(3))
	require.Equal(t, "", Arg(4), "an optional argument not given")
}

func TestStrtoulArg(t *testing.T) {
	withArgs(t, "client", "192.0.2.1", "7204", "7", "-1", "12x")
	require.EqualValues(t, 7, StrtoulArg(3))
	require.EqualValues(t, uint64(math.MaxUint64), StrtoulArg(4), "strtoul's -1")
	require.EqualValues(t, 12, StrtoulArg(5))
	require.Zero(t, StrtoulArg(6), "an optional argument not given")
}

// TestMain lets the tests below run this test binary as an example's main.
func TestMain(m *testing.M) {
	switch os.Getenv("COMMON_TEST_MAIN") {
	case "usage":
		os.Args = os.Args[:1]
		Start(3, "usage: %s <addr> <port>\n")
		os.Exit(0)
	case "exit":
		ExitStatus(errors.New("boom"), 254)
		os.Exit(0)
	case "ok":
		Exit(nil)
		os.Exit(7)
	}
	os.Exit(m.Run())
}

// runMain runs this binary as a main in mode; it returns the exit status
// and what went to stderr.
func runMain(t *testing.T, mode string) (int, string) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "COMMON_TEST_MAIN="+mode)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stderr.String()
}

func TestStartAndExit(t *testing.T) {
	status, out := runMain(t, "usage")
	require.Equal(t, 255, status)
	require.Equal(t, "usage: "+os.Args[0]+" <addr> <port>\n", out)

	status, out = runMain(t, "exit")
	require.Equal(t, 254, status)
	require.Equal(t, filepath.Base(os.Args[0])+": boom\n", out)

	status, _ = runMain(t, "ok")
	require.Equal(t, 7, status, "Exit(nil) returns")
}
