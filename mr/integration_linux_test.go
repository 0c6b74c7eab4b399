//go:build linux && cgo

package mr_test

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/internal/rdmatest/fixture"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/pmem"
	"github.com/gorpma/rpma/rpma"
)

// newPeer is a peer on the test device and the test address.
func newPeer(t *testing.T) (*peer.Peer, string) { return fixture.Peer(t) }

func TestIntegrationReg(t *testing.T) {
	p, _ := newPeer(t)
	r, err := pmem.Alloc(8192)
	require.NoError(t, err)
	defer r.Close()

	_, err = mr.Reg(p, r.Bytes(), 0)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = mr.Reg(p, r.Bytes(), 0x400)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	_, err = mr.Reg(p, r.Bytes(), mr.UsageGranted)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument, "UsageGranted alone grants nothing")
	_, err = mr.Reg(p, nil, mr.UsageSend)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)

	usage := mr.UsageWriteDst | mr.UsageReadSrc | mr.UsageFlushVisibility
	m, err := mr.Reg(p, r.Bytes()[4096:], usage)
	require.NoError(t, err)
	require.Equal(t, 4096, m.Size())
	require.Equal(t, usage, m.Usage())
	require.False(t, m.ODP())
	require.Equal(t, &r.Bytes()[4096], &m.Bytes()[0])

	d := m.Descriptor()
	require.Equal(t, m.Addr(), binary.LittleEndian.Uint64(d[0:]))
	require.Equal(t, uint64(4096), binary.LittleEndian.Uint64(d[8:]))
	require.Equal(t, byte(usage), d[20])
	rm, err := mr.RemoteFromDescriptor(d[:])
	require.NoError(t, err)
	require.Equal(t, m.Addr(), rm.Addr())
	require.Equal(t, uint64(4096), rm.Size())

	// rxe takes no advice.
	err = m.Advise(0, 4096, mr.AdvicePrefetchWrite, mr.AdviseFlagFlush)
	require.ErrorIs(t, err, rpma.ErrNotSupported)
	require.ErrorIs(t, m.Advise(4000, 200, mr.AdvicePrefetch, 0), rpma.ErrInvalidArgument)

	// The peer refuses to close while the region is registered.
	err = p.Close()
	require.ErrorIs(t, err, syscall.EBUSY)
	require.Contains(t, err.Error(), "memory regions")
	// So does the memory: unmapping it would leave the device writing
	// into whatever is mapped there next.
	err = r.Close()
	require.ErrorIs(t, err, syscall.EBUSY)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	require.Contains(t, err.Error(), "1 memory region(s) still registered")
	require.Len(t, r.Bytes(), 8192, "still mapped after the refusal")
	require.NoError(t, m.Dereg())
	require.NoError(t, m.Dereg())
	require.ErrorIs(t, m.Advise(0, 8, mr.AdvicePrefetch, 0), rpma.ErrInvalidArgument)
}

// TestIntegrationRegPMem registers the VM's emulated NVDIMM: Device DAX
// works on rxe; FsDAX memory cannot be pinned and rxe has no On-Demand
// Paging, which is librpma's "FsDAX needs ODP" provider error.
func TestIntegrationRegPMem(t *testing.T) {
	p, _ := newPeer(t)
	path, mode := rdmatest.PMem(t)
	usage := mr.UsageWriteDst | mr.UsageFlushPersistent | mr.UsageFlushVisibility
	switch mode {
	case "devdax":
		r, err := pmem.Map(path, 2<<20)
		require.NoError(t, err)
		defer r.Close()
		require.Equal(t, pmem.DeviceDAX, r.Kind())
		m, err := mr.Reg(p, r.Bytes(), usage)
		require.NoError(t, err)
		require.Equal(t, 2<<20, m.Size())
		require.NoError(t, m.Dereg())
	case "fsdax":
		r, err := pmem.Map(filepath.Join(path, "mr-test"), 2<<20)
		require.NoError(t, err)
		defer func() { r.Close(); os.Remove(filepath.Join(path, "mr-test")) }()
		require.Equal(t, pmem.FsDAX, r.Kind())
		require.False(t, p.ODP())
		_, err = mr.Reg(p, r.Bytes(), usage)
		require.ErrorIs(t, err, rpma.ErrProvider)
		require.ErrorIs(t, err, syscall.EOPNOTSUPP)
		require.Contains(t, err.Error(), "ODP")
		t.Logf("FsDAX on rxe: %v", err)
	default:
		t.Fatalf("unknown pmem mode %q", mode)
	}
}

// librpmaEncode registers memory with C librpma on the test device and
// prints its address, size and descriptor.
const librpmaEncode = `#include <stdio.h>
#include <stdlib.h>
#include <librpma.h>
int main(int argc, char **argv) {
	struct ibv_context *ctx; struct rpma_peer *peer; struct rpma_mr_local *mr;
	if (rpma_utils_get_ibv_context(argv[1], RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx)) return 1;
	if (rpma_peer_new(ctx, &peer)) return 2;
	void *buf; if (posix_memalign(&buf, 4096, 8192)) return 3;
	int usage = atoi(argv[2]);
	if (rpma_mr_reg(peer, buf, 8192, usage, &mr)) return 4;
	unsigned char d[21]; size_t n;
	rpma_mr_get_descriptor_size(mr, &n);
	rpma_mr_get_descriptor(mr, d);
	void *ptr; size_t size; rpma_mr_get_ptr(mr, &ptr); rpma_mr_get_size(mr, &size);
	printf("%llu %zu %zu ", (unsigned long long)(uintptr_t)ptr, size, n);
	for (int i = 0; i < 21; i++) printf("%02x", d[i]);
	printf("\n");
	rpma_mr_dereg(&mr); rpma_peer_delete(&peer); free(buf);
	return 0;
}
`

// TestIntegrationDescriptorFromLibrpma: a descriptor made by C librpma
// (1.2.0, on the same device) decodes in Go to its address, size and
// usage; Go's descriptors have the same layout.
func TestIntegrationDescriptorFromLibrpma(t *testing.T) {
	// The C program first: on a host without the device, the test builds it
	// (into the cache of C builds, internal/cbuild) and then skips.
	bin := rdmatest.LibrpmaProgram(t, strings.Replace(librpmaEncode, "#include <stdlib.h>", "#include <stdlib.h>\n#include <stdint.h>", 1))
	_, ip := newPeer(t)
	usage := mr.UsageWriteDst | mr.UsageReadSrc | mr.UsageFlushVisibility
	out, err := exec.Command(bin, ip, strconv.Itoa(int(usage))).CombinedOutput()
	require.NoError(t, err, "%s", out)
	f := strings.Fields(string(out))
	require.Len(t, f, 4, "%s", out)
	addr, _ := strconv.ParseUint(f[0], 10, 64)
	size, _ := strconv.ParseUint(f[1], 10, 64)
	require.Equal(t, "21", f[2])
	d, err := hex.DecodeString(f[3])
	require.NoError(t, err)
	r, err := mr.RemoteFromDescriptor(d)
	require.NoError(t, err)
	require.Equal(t, addr, r.Addr())
	require.Equal(t, size, r.Size())
	require.Equal(t, usage, r.Usage())
	require.Equal(t, mr.UsageFlushVisibility, r.FlushUsage())
	t.Logf("librpma descriptor %s: addr 0x%x size %d", f[3], addr, size)
}
