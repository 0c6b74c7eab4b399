package catalog

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestArgv(t *testing.T) {
	env := &Env{Dir: "/b", Addr: "192.0.2.1", Port: 7204}
	pair := Example{Name: "05-flush-to-persistent", Server: []string{"on"}, Client: []string{},
		PMem: func(p string) ([]string, []string) { return []string{p}, []string{p, "1024"} }}
	require.Equal(t, []string{"/b/05-flush-to-persistent-server", "192.0.2.1", "7209", "on"}, pair.argv(env, "server", 7209))
	env.PMem = "/dev/dax0.0"
	require.Equal(t, []string{"/b/05-flush-to-persistent-server", "192.0.2.1", "7209", "on", "/dev/dax0.0"}, pair.argv(env, "server", 7209))
	require.Equal(t, []string{"/b/05-flush-to-persistent-client", "192.0.2.1", "7209", "/dev/dax0.0", "1024"}, pair.argv(env, "client", 7209))

	single := Example{Name: "devinfo"}
	require.Equal(t, []string{"/b/devinfo"}, single.argv(env, "client", 1))
	ext := Example{Name: "rping", Bin: []string{"rping", "rping"}, Server: []string{"-s", "-a", "{addr}", "-p", "{port}"}}
	require.Equal(t, []string{"rping", "-s", "-a", "192.0.2.1", "-p", "7205"}, ext.argv(env, "server", 7205))
}

func TestPrefixWriter(t *testing.T) {
	var out bytes.Buffer
	w := &prefixWriter{mu: &sync.Mutex{}, w: &out, prefix: "[s] "}
	w.Write([]byte("a\nb"))
	w.Write([]byte("c\n"))
	require.Equal(t, "[s] a\n[s] bc\n", out.String())
}

func TestAllOrder(t *testing.T) {
	all := All()
	require.GreaterOrEqual(t, len(all), 2)
	require.Equal(t, "devinfo", all[0].Name)
	require.Equal(t, "rping", all[1].Name)
	for i := 3; i < len(all); i++ {
		require.Less(t, all[i-1].Name, all[i].Name, "examples run in name order")
	}
}
