package mr_test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/mr"
	"github.com/gorpma/rpma/rpma"
)

func TestMain(m *testing.M) { leak.Main(m) }

func TestUsageValues(t *testing.T) {
	// librpma.h's RPMA_MR_USAGE_* values.
	for u, want := range map[mr.Usage]int{
		mr.UsageReadSrc: 1, mr.UsageReadDst: 2, mr.UsageWriteSrc: 4, mr.UsageWriteDst: 8,
		mr.UsageFlushVisibility: 16, mr.UsageFlushPersistent: 32, mr.UsageSend: 64, mr.UsageRecv: 128,
	} {
		require.Equal(t, want, int(u))
	}
	require.Equal(t, 21, mr.DescriptorSize)
}

func descriptor(addr, size uint64, rkey uint32, usage byte) []byte {
	d := make([]byte, 21)
	binary.LittleEndian.PutUint64(d, addr)
	binary.LittleEndian.PutUint64(d[8:], size)
	binary.LittleEndian.PutUint32(d[16:], rkey)
	d[20] = usage
	return d
}

func TestRemoteFromDescriptor(t *testing.T) {
	d := descriptor(0x7f0012345000, 1<<20, 0xabcdef01, byte(mr.UsageWriteDst|mr.UsageFlushPersistent|mr.UsageFlushVisibility))
	r, err := mr.RemoteFromDescriptor(append(d, 0xff, 0xff)) // longer is fine
	require.NoError(t, err)
	require.Equal(t, uint64(1<<20), r.Size())
	require.Equal(t, uint64(0x7f0012345000), r.Addr())
	require.Equal(t, mr.UsageFlushPersistent|mr.UsageFlushVisibility, r.FlushUsage())
	require.Equal(t, mr.UsageWriteDst|mr.UsageFlushPersistent|mr.UsageFlushVisibility, r.Usage())
	require.Equal(t, r.FlushUsage(), r.FlushType(), "the deprecated name")
	desc := r.Descriptor()
	require.Equal(t, d, desc[:], "the descriptor it was decoded from")
	var nilRemote *mr.Remote
	require.Equal(t, [21]byte{}, nilRemote.Descriptor())

	_, err = mr.RemoteFromDescriptor(d[:20])
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
	d[20] = 0
	_, err = mr.RemoteFromDescriptor(d)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument, "usage 0")
	d[20] = 0x80 // unknown combinations are not checked, as in librpma
	_, err = mr.RemoteFromDescriptor(d)
	require.NoError(t, err)

	var m *mr.Local
	require.NoError(t, m.Dereg())
	require.Equal(t, [21]byte{}, m.Descriptor())
	require.Nil(t, m.Bytes())
	_, err = mr.Reg(nil, make([]byte, 8), mr.UsageSend)
	require.ErrorIs(t, err, rpma.ErrInvalidArgument)
}

func FuzzRemoteFromDescriptor(f *testing.F) {
	f.Add(descriptor(1, 2, 3, 4))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := mr.RemoteFromDescriptor(b)
		if len(b) < 21 || b[20] == 0 {
			require.ErrorIs(t, err, rpma.ErrInvalidArgument)
			return
		}
		require.NoError(t, err)
		require.Equal(t, binary.LittleEndian.Uint64(b[8:]), r.Size())
		require.Equal(t, mr.Usage(b[20]), r.Usage())
		d := r.Descriptor()
		require.Equal(t, b[:21], d[:], "Descriptor gives back what was decoded")
	})
}

// librpmaDecode decodes descriptors given in hex on the command line with
// librpma and prints, for each, the return code, size and flush type.
const librpmaDecode = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <librpma.h>
int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		unsigned char d[64]; size_t n = strlen(argv[i]) / 2;
		for (size_t j = 0; j < n; j++) sscanf(argv[i] + 2*j, "%2hhx", &d[j]);
		struct rpma_mr_remote *r = NULL;
		int ret = rpma_mr_remote_from_descriptor(d, n, &r);
		size_t size = 0; int ft = -1;
		if (!ret) { rpma_mr_remote_get_size(r, &size); rpma_mr_remote_get_flush_type(r, &ft); rpma_mr_remote_delete(&r); }
		printf("%d %zu %d\n", ret, size, ft);
	}
	return 0;
}
`

// TestDescriptorDecodesLikeLibrpma feeds the same descriptors to C
// librpma and to RemoteFromDescriptor.
func TestDescriptorDecodesLikeLibrpma(t *testing.T) {
	bin := rdmatest.LibrpmaProgram(t, librpmaDecode)
	inputs := [][]byte{
		descriptor(0x1000, 4096, 7, byte(mr.UsageWriteDst)),
		descriptor(0xdeadbeef000, 1<<40, 0xffffffff, byte(mr.UsageFlushVisibility|mr.UsageReadSrc)),
		descriptor(1, 2, 3, byte(mr.UsageFlushPersistent|mr.UsageFlushVisibility)),
		descriptor(1, 2, 3, 0),                  // usage 0
		descriptor(1, 2, 3, 0xff)[:20],          // short
		append(descriptor(9, 8, 7, 0x30), 1, 2), // longer
	}
	args := make([]string, len(inputs))
	for i, in := range inputs {
		args[i] = hex.EncodeToString(in)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var want strings.Builder
	for _, in := range inputs {
		r, err := mr.RemoteFromDescriptor(in)
		if err != nil {
			code, _ := rpma.CodeOf(err)
			fmt.Fprintf(&want, "%d 0 -1\n", code)
			continue
		}
		fmt.Fprintf(&want, "0 %d %d\n", r.Size(), r.FlushUsage())
	}
	require.Equal(t, want.String(), string(out))
}

// TestExtendedDescriptor: RemoteFromExtendedDescriptor reads the 21 bytes
// as RemoteFromDescriptor does plus the usage bits above the first byte;
// it refuses short input, no usage and unknown bits.
func TestExtendedDescriptor(t *testing.T) {
	d := append(descriptor(0x1000, 4096, 7, byte(mr.UsageReadSrc)), byte(mr.UsageAtomicDst>>8))
	require.Len(t, d, mr.ExtendedDescriptorSize)
	r, err := mr.RemoteFromExtendedDescriptor(append(d, 0xee))
	require.NoError(t, err)
	require.Equal(t, mr.UsageReadSrc|mr.UsageAtomicDst, r.Usage())
	require.Equal(t, uint64(0x1000), r.Addr())
	require.Equal(t, uint64(4096), r.Size())
	ext := r.ExtendedDescriptor()
	require.Equal(t, d, ext[:], "ExtendedDescriptor gives back what was decoded")
	// librpma's decoder, on the same bytes, sees only its usages.
	r, err = mr.RemoteFromDescriptor(d)
	require.NoError(t, err)
	require.Equal(t, mr.UsageReadSrc, r.Usage())

	only := append(descriptor(1, 8, 3, 0), byte(mr.UsageAtomicDst>>8))
	r, err = mr.RemoteFromExtendedDescriptor(only)
	require.NoError(t, err)
	require.Equal(t, mr.UsageAtomicDst, r.Usage())
	for name, in := range map[string][]byte{
		"short":        d[:mr.DescriptorSize],
		"no usage":     append(descriptor(1, 8, 3, 0), 0),
		"unknown bits": append(descriptor(1, 8, 3, 1), 2),
	} {
		_, err := mr.RemoteFromExtendedDescriptor(in)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument, name)
	}
	// A nil region's descriptors are zeros.
	require.Equal(t, [mr.ExtendedDescriptorSize]byte{}, (*mr.Local)(nil).ExtendedDescriptor())
	require.Equal(t, [mr.ExtendedDescriptorSize]byte{}, (*mr.Remote)(nil).ExtendedDescriptor())
}
