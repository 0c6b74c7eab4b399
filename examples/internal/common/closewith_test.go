package common

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCloseWith(t *testing.T) {
	closed := 0
	ok := func() error { closed++; return nil }
	errA, errB := errors.New("a"), errors.New("b")

	var err error
	CloseWith(&err, "x", ok)
	require.NoError(t, err)
	require.Equal(t, 1, closed, "close is called")

	CloseWith(&err, "x.Close", func() error { return errA })
	require.ErrorIs(t, err, errA)
	require.EqualError(t, err, "x.Close: a")

	// a second failure is added, the first one kept
	CloseWith(&err, "y.Close", func() error { return errB })
	require.ErrorIs(t, err, errA)
	require.ErrorIs(t, err, errB)
	require.EqualError(t, err, "x.Close: a\ny.Close: b")

	// a successful close leaves the error alone
	CloseWith(&err, "z", ok)
	require.EqualError(t, err, "x.Close: a\ny.Close: b")
}

func TestCloseAll(t *testing.T) {
	var order []string
	step := func(name string, err error) closer {
		return closer{name, func() error { order = append(order, name); return err }}
	}
	require.NoError(t, closeAll(step("a", nil), step("b", nil))())
	require.Equal(t, []string{"a", "b"}, order)

	// every step runs, every error is reported
	order = nil
	err := closeAll(step("a", errors.New("x")), step("b", nil), step("c", errors.New("y")))()
	require.Equal(t, []string{"a", "b", "c"}, order)
	require.EqualError(t, err, "a: x\nc: y")
}
