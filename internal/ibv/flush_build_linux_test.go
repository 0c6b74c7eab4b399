//go:build linux && cgo && !rpma_native_flush && !rpma_fake

package ibv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rdmaCore45 are the declarations rdma-core 45 added to <infiniband/verbs.h>
// for native flush, each with the line of the rdma-core 44 header it
// follows.
var rdmaCore45 = []struct{ after, add string }{
	{"\tIBV_ACCESS_HUGETLB\t\t= (1<<7),\n",
		"\tIBV_ACCESS_FLUSH_GLOBAL\t\t= (1 << 8),\n\tIBV_ACCESS_FLUSH_PERSISTENT\t= (1 << 9),\n"},
	{"\tIBV_QP_EX_WITH_TSO\t\t\t= 1 << 10,\n",
		"\tIBV_QP_EX_WITH_FLUSH\t\t\t= 1 << 11,\n"},
	{"\t\t\t\tuint64_t remote_addr, const void *atomic_wr);\n};\n",
		"struct ibv_qp_ex; /* (the member goes before the brace; see below) */\n"},
	{"struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp);\n",
		"enum ibv_placement_type { IBV_FLUSH_GLOBAL = 1U << 0, IBV_FLUSH_PERSISTENT = 1U << 1 };\n" +
			"enum ibv_selectivity_level { IBV_FLUSH_RANGE = 0, IBV_FLUSH_MR };\n" +
			"static inline void ibv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,\n" +
			"\t\t\t\tsize_t len, uint8_t type, uint8_t level)\n" +
			"{\n\tqp->wr_flush(qp, rkey, remote_addr, len, type, level);\n}\n"},
}

// TestNativeFlushBuilds compiles the package with the rpma_native_flush
// tag against a copy of this machine's rdma-core 44 header patched with
// what rdma-core 45 added, so the native-flush code keeps compiling where
// it cannot run.
func TestNativeFlushBuilds(t *testing.T) {
	if os.Getenv("RPMA_TEST_KERNEL") != "" {
		// Inside the test VM, where a Go build would take minutes under
		// emulation; the host tier runs this test.
		t.Log("checked by the host tier")
		return
	}
	hdr, err := os.ReadFile("/usr/include/infiniband/verbs.h")
	require.NoError(t, err)
	s := string(hdr)
	if strings.Contains(s, "ibv_wr_flush") {
		t.Skip("the installed libibverbs has native flush: the tagged build is the real one")
	}
	for _, p := range rdmaCore45 {
		require.Contains(t, s, p.after, "anchor of the patch")
		if strings.HasPrefix(p.add, "struct ibv_qp_ex;") {
			// The wr_flush member ends struct ibv_qp_ex, as in rdma-core 45.
			member := "\t\t\t\tuint64_t remote_addr, const void *atomic_wr);\n" +
				"\tvoid (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,\n" +
				"\t\t\t size_t len, uint8_t type, uint8_t level);\n};\n"
			s = strings.Replace(s, p.after, member, 1)
			continue
		}
		s = strings.Replace(s, p.after, p.after+p.add, 1)
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "infiniband"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "infiniband", "verbs.h"), []byte(s), 0o644))

	for _, args := range [][]string{
		{"build", "-tags", "rpma_native_flush", "-o", os.DevNull, "."},
		{"vet", "-tags", "rpma_native_flush", "."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "CGO_CFLAGS=-I"+dir+" -O2 -g")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
	}
}
