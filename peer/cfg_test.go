package peer_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorpma/rpma/internal/leak"
	"github.com/gorpma/rpma/internal/rdmatest"
	"github.com/gorpma/rpma/peer"
	"github.com/gorpma/rpma/rpma"
)

func TestMain(m *testing.M) { leak.Main(m) }

func TestCfgDescriptorLayout(t *testing.T) {
	require.Equal(t, 1, peer.CfgDescriptorSize)
	require.Equal(t, [1]byte{0x00}, peer.Cfg{}.Descriptor(), "librpma's default")
	require.Equal(t, [1]byte{0x01}, peer.Cfg{DirectWriteToPMem: true}.Descriptor())
}

func TestCfgFromDescriptor(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want bool
	}{
		{[]byte{0x00}, false},
		{[]byte{0x01}, true},
		{[]byte{0x02}, true}, // any non-zero byte
		{[]byte{0xff}, true},
		{[]byte{0x00, 0x01}, false}, // extra bytes ignored
		{[]byte{0x01, 0x00, 0x00}, true},
	} {
		got, err := peer.CfgFromDescriptor(tc.in)
		require.NoError(t, err, "%x", tc.in)
		require.Equal(t, tc.want, got.DirectWriteToPMem, "%x", tc.in)
	}
	for _, in := range [][]byte{nil, {}} {
		_, err := peer.CfgFromDescriptor(in)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		code, ok := rpma.CodeOf(err)
		require.True(t, ok)
		require.Equal(t, rpma.CodeInval, code)
	}
}

func TestCfgRoundTrip(t *testing.T) {
	for _, c := range []peer.Cfg{{}, {DirectWriteToPMem: true}} {
		d := c.Descriptor()
		got, err := peer.CfgFromDescriptor(d[:])
		require.NoError(t, err)
		require.Equal(t, c, got)
	}
}

func FuzzCfgFromDescriptor(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := peer.CfgFromDescriptor(b)
		if len(b) == 0 {
			require.ErrorIs(t, err, rpma.ErrInvalidArgument)
			return
		}
		require.NoError(t, err)
		require.Equal(t, b[0] != 0, c.DirectWriteToPMem)
		d := c.Descriptor()
		again, err := peer.CfgFromDescriptor(d[:])
		require.NoError(t, err)
		require.Equal(t, c, again)
	})
}

// librpmaProgram encodes both configurations with librpma and decodes a
// set of inputs; it prints one line per result.
const librpmaProgram = `#include <stdio.h>
#include <stdbool.h>
#include <librpma.h>
int main(void) {
	for (int v = 0; v < 2; v++) {
		struct rpma_peer_cfg *c; rpma_peer_cfg_new(&c);
		rpma_peer_cfg_set_direct_write_to_pmem(c, v);
		size_t n; rpma_peer_cfg_get_descriptor_size(c, &n);
		unsigned char d[8] = {0xAA}; rpma_peer_cfg_get_descriptor(c, d);
		printf("enc %d %zu %02x\n", v, n, d[0]);
		rpma_peer_cfg_delete(&c);
	}
	unsigned char in[][2] = {{0,1},{1,0},{2,0},{0xff,0}};
	for (int i = 0; i < 4; i++) {
		struct rpma_peer_cfg *c;
		int ret = rpma_peer_cfg_from_descriptor(in[i], 2, &c);
		bool b = false; if (!ret) { rpma_peer_cfg_get_direct_write_to_pmem(c, &b); rpma_peer_cfg_delete(&c); }
		printf("dec %02x %d %d\n", in[i][0], ret, b);
	}
	struct rpma_peer_cfg *c;
	printf("short %d\n", rpma_peer_cfg_from_descriptor(in[0], 0, &c));
	return 0;
}
`

// TestCfgMatchesLibrpma checks the descriptor against the C librpma
// (Debian's librpma-dev), when a C compiler and librpma are installed.
func TestCfgMatchesLibrpma(t *testing.T) {
	bin := rdmatest.LibrpmaProgram(t, librpmaProgram)
	out, err := exec.Command(bin).CombinedOutput()
	require.NoError(t, err, "%s", out)

	var want strings.Builder
	for v := 0; v < 2; v++ {
		d := peer.Cfg{DirectWriteToPMem: v == 1}.Descriptor()
		fmt.Fprintf(&want, "enc %d %d %02x\n", v, peer.CfgDescriptorSize, d[0])
	}
	for _, b := range []byte{0, 1, 2, 0xff} {
		c, err := peer.CfgFromDescriptor([]byte{b, 0})
		require.NoError(t, err)
		fmt.Fprintf(&want, "dec %02x 0 %d\n", b, map[bool]int{false: 0, true: 1}[c.DirectWriteToPMem])
	}
	_, err = peer.CfgFromDescriptor(nil)
	code, _ := rpma.CodeOf(err)
	fmt.Fprintf(&want, "short %d\n", code)
	require.Equal(t, want.String(), string(out))
}
