package rpma_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/rpma"
)

func TestCompletionFlags(t *testing.T) {
	require.Equal(t, 1, int(rpma.CompletionOnError))
	require.Equal(t, 3, int(rpma.CompletionAlways))
	require.Equal(t, rpma.CompletionOnError, rpma.CompletionAlways&rpma.CompletionOnError)
	require.Equal(t, "RPMA_F_COMPLETION_ON_ERROR", rpma.CompletionOnError.String())
	require.Equal(t, "RPMA_F_COMPLETION_ALWAYS", rpma.CompletionAlways.String())
	require.Equal(t, "CompletionFlags(0)", rpma.CompletionFlags(0).String())
	require.Equal(t, "CompletionFlags(2)", rpma.CompletionFlags(2).String())
}

func TestFlushType(t *testing.T) {
	require.Equal(t, 0, int(rpma.FlushPersistent))
	require.Equal(t, 1, int(rpma.FlushVisibility))
	require.Equal(t, "RPMA_FLUSH_TYPE_PERSISTENT", rpma.FlushPersistent.String())
	require.Equal(t, "RPMA_FLUSH_TYPE_VISIBILITY", rpma.FlushVisibility.String())
	require.Equal(t, "FlushType(2)", rpma.FlushType(2).String())
}

func TestAtomicWriteAlignment(t *testing.T) {
	require.Equal(t, 8, rpma.AtomicWriteAlignment)
}

func TestUtilIbvContextType(t *testing.T) {
	require.Equal(t, 0, int(rpma.IbvContextLocal))
	require.Equal(t, 1, int(rpma.IbvContextRemote))
	require.Equal(t, "RPMA_UTIL_IBV_CONTEXT_LOCAL", rpma.IbvContextLocal.String())
	require.Equal(t, "RPMA_UTIL_IBV_CONTEXT_REMOTE", rpma.IbvContextRemote.String())
	require.Equal(t, "UtilIbvContextType(-1)", rpma.UtilIbvContextType(-1).String())
}
