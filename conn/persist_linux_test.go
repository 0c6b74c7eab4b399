//go:build linux && cgo

package conn_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// TestIntegrationFlushPersistent writes into persistent memory and
// flushes it to persistence, as librpma's example 05: the server declares
// direct write to PMem in its peer configuration, the client applies it.
// Device DAX memory registers on rxe; FsDAX memory does not (no ODP), so
// in the FsDAX tier the target is DRAM, which the library cannot tell
// apart (placement is the application's statement).
func TestIntegrationFlushPersistent(t *testing.T) {
	p, ip := newPeer(t)
	e := listen(t, p, ip)
	client, _ := pairCfg(t, p, e, ip, nil, nil, nil)
	ctx := testCtx(t)

	path, mode := rdmatest.PMem(t)
	var target *pmem.Region
	var err error
	if mode == "devdax" {
		target, err = pmem.Map(path, 2<<20)
	} else {
		target, err = pmem.Alloc(2 << 20)
	}
	require.NoError(t, err)
	defer target.Close()
	dst, err := mr.Reg(p, target.Bytes(), mr.UsageWriteDst|mr.UsageFlushPersistent|mr.UsageFlushVisibility)
	require.NoError(t, err)
	defer func() { require.NoError(t, dst.Dereg()) }()
	desc := dst.Descriptor()
	rdst, err := mr.RemoteFromDescriptor(desc[:])
	require.NoError(t, err)
	src, srcMem := region(t, p, 4096, mr.UsageWriteSrc)

	pcfg := peer.Cfg{DirectWriteToPMem: true}.Descriptor()
	cfg, err := peer.CfgFromDescriptor(pcfg[:])
	require.NoError(t, err)
	require.NoError(t, client.ApplyRemotePeerCfg(cfg))

	data := bytes.Repeat([]byte("persistent "), 100)
	copy(srcMem, data)
	off := 1 << 20
	require.NoError(t, client.Write(rdst, off, src, 0, len(data), rpma.CompletionOnError, 1))
	require.NoError(t, client.Flush(rdst, off, len(data), rpma.FlushPersistent, rpma.CompletionAlways, 2))
	okWC(t, ctx, client.CQ(), flushOp(client), 2)
	require.Equal(t, data, target.Bytes()[off:off+len(data)])
	require.NoError(t, target.Persist(off, len(data)))
	t.Logf("%d bytes flushed to persistence in %s memory", len(data), target.Kind())
}
