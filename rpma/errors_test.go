package rpma_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

// librpmaCodes is the table of librpma.h and src/rpma_err.c.
var librpmaCodes = []struct {
	code     rpma.Code
	value    int
	str      string
	sentinel error
}{
	{rpma.CodeUnknown, -100000, "Unknown error", rpma.ErrUnknown},
	{rpma.CodeNoSupp, -100001, "Not supported", rpma.ErrNotSupported},
	{rpma.CodeProvider, -100002, "Provider error occurred", rpma.ErrProvider},
	{rpma.CodeNoMem, -100003, "Out of memory", rpma.ErrNoMem},
	{rpma.CodeInval, -100004, "Invalid argument", rpma.ErrInvalidArgument},
	{rpma.CodeNoCompletion, -100005, "No next completion available", rpma.ErrNoCompletion},
	{rpma.CodeNoEvent, -100006, "No next event available", rpma.ErrNoEvent},
	{rpma.CodeAgain, -100007, "Temporary error, try again", rpma.ErrAgain},
	{rpma.CodeSharedChannel, -100008, "Completion channel is shared", rpma.ErrSharedChannel},
	{rpma.CodeNotSharedChnl, -100009, "Completion channel is not shared", rpma.ErrNotSharedChannel},
}

func TestCodeStrings(t *testing.T) {
	for _, tt := range librpmaCodes {
		t.Run(tt.str, func(t *testing.T) {
			require.Equal(t, tt.value, int(tt.code))
			require.Equal(t, tt.str, tt.code.String())
			require.Equal(t, tt.str, rpma.ErrorString(tt.value))
			require.Equal(t, tt.str, tt.sentinel.Error())

			code, ok := rpma.CodeOf(tt.sentinel)
			require.True(t, ok)
			require.Equal(t, tt.code, code)
		})
	}
}

func TestErrorStringSuccessAndUnknown(t *testing.T) {
	require.Equal(t, "Success", rpma.ErrorString(0))
	require.Equal(t, "Success", rpma.Code(0).String())
	for _, v := range []int{1, -1, -99999, -100010, -200000, 100000} {
		require.Equal(t, "Unknown error", rpma.ErrorString(v), "value %d", v)
		require.Equal(t, "Unknown error", rpma.Code(v).String(), "value %d", v)
	}
}

func TestSentinelsAreDistinct(t *testing.T) {
	all := []error{rpma.ErrConnBroken, rpma.ErrQueueFull}
	for _, tt := range librpmaCodes {
		all = append(all, tt.sentinel)
	}
	for i, a := range all {
		for j, b := range all {
			if a == rpma.ErrQueueFull && b == rpma.ErrProvider {
				continue // ErrQueueFull deliberately matches ErrProvider
			}
			require.Equal(t, i == j, errors.Is(a, b), "errors.Is(%q, %q)", a, b)
		}
	}
}

func TestOpErrorMessage(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{
			name: "errno and detail",
			err:  &rpma.OpError{Op: "ibv_reg_mr", Code: rpma.CodeProvider, Errno: syscall.EOPNOTSUPP, Msg: "maybe FsDAX needs ODP"},
			want: "rpma: ibv_reg_mr: Provider error occurred: operation not supported (maybe FsDAX needs ODP)",
		},
		{
			name: "errno only",
			err:  &rpma.OpError{Op: "ibv_alloc_pd", Code: rpma.CodeProvider, Errno: syscall.ENOMEM},
			want: "rpma: ibv_alloc_pd: Provider error occurred: cannot allocate memory",
		},
		{
			name: "detail only",
			err:  &rpma.OpError{Op: "mr_reg", Code: rpma.CodeInval, Msg: "usage 0x100 has unknown bits"},
			want: "rpma: mr_reg: Invalid argument (usage 0x100 has unknown bits)",
		},
		{
			name: "no detail",
			err:  &rpma.OpError{Op: "flush", Code: rpma.CodeNoSupp},
			want: "rpma: flush: Not supported",
		},
		{
			name: "no op",
			err:  &rpma.OpError{Code: rpma.CodeNoEvent},
			want: "rpma: No next event available",
		},
		{
			name: "unknown code",
			err:  &rpma.OpError{Op: "conn_next_event", Code: -5},
			want: "rpma: conn_next_event: Unknown error",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.err.Error())
		})
	}
}

func TestOpErrorFields(t *testing.T) {
	var err error = &rpma.OpError{Op: "ibv_reg_mr", Code: rpma.CodeProvider, Errno: syscall.EOPNOTSUPP, Msg: "n=3"}
	var opErr *rpma.OpError
	require.ErrorAs(t, err, &opErr)
	require.Equal(t, rpma.OpError{
		Op:    "ibv_reg_mr",
		Code:  rpma.CodeProvider,
		Errno: syscall.EOPNOTSUPP,
		Msg:   "n=3",
	}, *opErr)
	require.Equal(t, []error{rpma.ErrProvider, syscall.EOPNOTSUPP}, opErr.Unwrap())

	require.Equal(t, []error{rpma.ErrInvalidArgument}, (&rpma.OpError{Code: rpma.CodeInval}).Unwrap())
	require.Equal(t, []error{syscall.EIO}, (&rpma.OpError{Errno: syscall.EIO}).Unwrap())
	require.Nil(t, (&rpma.OpError{}).Unwrap())
}

func TestOpErrorIsSentinelAndErrno(t *testing.T) {
	base := &rpma.OpError{Op: "ibv_reg_mr", Code: rpma.CodeProvider, Errno: syscall.EOPNOTSUPP}
	wrapped := fmt.Errorf("register mr: %w", base)
	twice := fmt.Errorf("setup: %w", wrapped)

	for name, err := range map[string]error{"bare": base, "wrapped": wrapped, "wrapped twice": twice} {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, err, rpma.ErrProvider)
			require.ErrorIs(t, err, syscall.EOPNOTSUPP)
			require.NotErrorIs(t, err, rpma.ErrInvalidArgument)
			require.NotErrorIs(t, err, rpma.ErrQueueFull)
			require.NotErrorIs(t, err, syscall.ENOMEM)
			require.NotErrorIs(t, err, rpma.ErrCompletion)

			code, ok := rpma.CodeOf(err)
			require.True(t, ok)
			require.Equal(t, rpma.CodeProvider, code)

			var opErr *rpma.OpError
			require.ErrorAs(t, err, &opErr)
			require.Equal(t, "ibv_reg_mr", opErr.Op)

			var errno syscall.Errno
			require.ErrorAs(t, err, &errno)
			require.Equal(t, syscall.EOPNOTSUPP, errno)
		})
	}
}

func TestOpErrorErrnoMatchesOSErrors(t *testing.T) {
	// syscall.Errno's own Is method keeps working behind an OpError.
	err := fmt.Errorf("listen: %w", &rpma.OpError{Op: "rdma_bind_addr", Code: rpma.CodeProvider, Errno: syscall.EACCES})
	require.ErrorIs(t, err, fs.ErrPermission)
	require.NotErrorIs(t, err, fs.ErrNotExist)
}

func TestOpErrorWithoutErrnoMatchesNoErrno(t *testing.T) {
	var err error = &rpma.OpError{Op: "mr_reg", Code: rpma.CodeInval, Msg: "size 0"}
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.NotErrorIs(t, err, syscall.Errno(0))
	require.NotErrorIs(t, err, syscall.EINVAL)
}

func TestOpErrorMatchesOnlyItsCodeSentinel(t *testing.T) {
	for _, tt := range librpmaCodes {
		err := fmt.Errorf("op: %w", &rpma.OpError{Op: "x", Code: tt.code})
		for _, other := range librpmaCodes {
			require.Equal(t, other.code == tt.code, errors.Is(err, other.sentinel),
				"errors.Is(OpError(%v), %q)", tt.code, other.sentinel)
		}
		require.NotErrorIs(t, err, rpma.ErrQueueFull)
		require.NotErrorIs(t, err, rpma.ErrConnBroken)
		require.EqualError(t, err, "op: rpma: x: "+tt.str)
	}
}

func TestOpErrorUnknownCodeMatchesErrUnknown(t *testing.T) {
	err := &rpma.OpError{Op: "poll", Code: -42}
	require.ErrorIs(t, err, rpma.ErrUnknown)
	code, ok := rpma.CodeOf(err)
	require.True(t, ok)
	require.Equal(t, rpma.Code(-42), code)
}

func TestCodeOfWithoutCode(t *testing.T) {
	for name, err := range map[string]error{
		"nil":         nil,
		"foreign":     errors.New("boom"),
		"errno":       syscall.EIO,
		"conn broken": fmt.Errorf("post: %w", rpma.ErrConnBroken),
		"wc error":    &rpma.WCError{Status: rpma.WCRemAccessErr},
	} {
		code, ok := rpma.CodeOf(err)
		require.False(t, ok, name)
		require.Zero(t, code, name)
	}
}

func TestCodeOfThroughJoin(t *testing.T) {
	err := errors.Join(errors.New("first"), fmt.Errorf("second: %w", rpma.ErrNoEvent))
	code, ok := rpma.CodeOf(err)
	require.True(t, ok)
	require.Equal(t, rpma.CodeNoEvent, code)
}

func TestErrConnBroken(t *testing.T) {
	require.Equal(t, "rpma: connection broken (QP in error state)", rpma.ErrConnBroken.Error())
	err := fmt.Errorf("write: %w", rpma.ErrConnBroken)
	require.ErrorIs(t, err, rpma.ErrConnBroken)
	for _, tt := range librpmaCodes {
		require.NotErrorIs(t, err, tt.sentinel)
	}
}

func TestErrQueueFull(t *testing.T) {
	require.Equal(t, "rpma: queue full", rpma.ErrQueueFull.Error())
	err := fmt.Errorf("write: %w", rpma.ErrQueueFull)
	require.ErrorIs(t, err, rpma.ErrQueueFull)
	require.ErrorIs(t, err, rpma.ErrProvider)
	require.NotErrorIs(t, err, rpma.ErrUnknown)
	require.NotErrorIs(t, err, rpma.ErrConnBroken)
	require.NotErrorIs(t, rpma.ErrProvider, rpma.ErrQueueFull)

	code, ok := rpma.CodeOf(err)
	require.True(t, ok)
	require.Equal(t, rpma.CodeProvider, code)
}

// Prebuilt errors, as hot paths of the other packages declare them.
var errPostSendNoMem error = &rpma.OpError{Op: "ibv_post_send", Code: rpma.CodeProvider, Errno: syscall.ENOMEM}

//go:noinline
func postSend(fail bool) error {
	if fail {
		return errPostSendNoMem
	}
	return nil
}

//go:noinline
func postWrite(fail bool) error {
	if fail {
		return rpma.ErrQueueFull
	}
	return nil
}

func TestPrebuiltErrorsDoNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		err := postSend(true)
		if !errors.Is(err, rpma.ErrProvider) || !errors.Is(err, syscall.ENOMEM) {
			panic("no match")
		}
		err = postWrite(true)
		if !errors.Is(err, rpma.ErrQueueFull) || !errors.Is(err, rpma.ErrProvider) {
			panic("no match")
		}
	})
	require.Zero(t, allocs)
}

func TestConnEventError(t *testing.T) {
	var err error = &rpma.ConnEventError{Event: rpma.ConnLost}
	require.ErrorIs(t, err, rpma.ErrConnBroken)
	require.NotErrorIs(t, err, rpma.ErrCompletion)
	_, ok := rpma.CodeOf(err)
	require.False(t, ok)
	require.Equal(t, "rpma: waiting for completions: Connection lost", err.Error())
}
