package catalog

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

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

// A server that ends before it listens (a PMem example failing as it must
// in FsDAX mode, say) ends the run at once, with its exit status and its
// last words; no client is started.
func TestRunServerExitsBeforeListening(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "client-ran")
	e := Example{
		Name:   "early",
		Bin:    []string{"sh", "sh"},
		Server: []string{"-c", "echo starting; echo boom >&2; exit 3"},
		Client: []string{"-c", "touch " + marker},
	}
	env := &Env{Dir: dir, Addr: "192.0.2.1", Port: 7204, Out: io.Discard}
	start := time.Now()
	r := e.Run(env, 0)
	require.Less(t, time.Since(start), 10*time.Second, "waited for a server that had exited")
	require.ErrorContains(t, r.Err, "server exited before listening: exit status 3: boom")
	require.Equal(t, "starting\n", r.Server)
	require.NoFileExists(t, marker, "the client ran")

	// in FsDAX mode without ODP a PMem example must fail so, naming ODP
	e.PMem = func(string) ([]string, []string) { return nil, nil }
	e.Server = []string{"-c", "echo 'mr.Reg: FsDAX needs ODP' >&2; exit 255"}
	env.PMem, env.PMemMode = dir, "fsdax"
	r = e.Run(env, 0)
	require.NoError(t, r.Err)
	e.Server = []string{"-c", "echo 'something else' >&2; exit 255"}
	r = e.Run(env, 0)
	require.ErrorContains(t, r.Err, "expected the FsDAX registration error naming ODP")
}

// waitListening gives up after its time when nothing listens and the
// server lives on.
func TestWaitListeningBounded(t *testing.T) {
	start := time.Now()
	require.True(t, waitListening("192.0.2.1", 7204, 300*time.Millisecond, make(chan struct{})))
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestPMemPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "dev")
	require.Equal(t, file, pmemPath(file, "x"), "a path that is not a directory is used as it is")

	p := pmemPath(dir, "03-read-to-persistent")
	require.Equal(t, filepath.Join(dir, "03-read-to-persistent.pmem"), p)
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.EqualValues(t, pmemFileSize, st.Size())

	s, c := pmemArgs("05-flush-to-persistent", []string{"on"})(dir)
	p = filepath.Join(dir, "05-flush-to-persistent.pmem")
	require.Equal(t, []string{p, "on"}, s)
	require.Equal(t, []string{p, "1024"}, c)
}

func TestCheckCounter(t *testing.T) {
	check := checkCounter(4, 50)
	server := "counter: 200\nlocked counter: 4\nlock: 0\n"
	client := "connections: 4, adds: 50, distinct old values: 200\nlock taken and released: 4 times, waited 3 times\n"
	require.NoError(t, check(server, client))
	require.Error(t, check("counter: 199\nlocked counter: 4\nlock: 0\n", client), "a lost add")
	require.Error(t, check("counter: 200\nlocked counter: 3\nlock: 0\n", client), "a lost locked add")
	require.Error(t, check(server, "connections: 4, adds: 50, distinct old values: 199\nlock taken and released: 4 times, waited 3 times\n"))
}

func TestCheckGrant(t *testing.T) {
	check := checkGrant(2)
	server := "tenant 0: Hello from tenant 0\ntenant 1: Hello from tenant 1\n"
	client := "tenant 0 wrote its slot\ntenant 1 wrote its slot\ntenant 1 with tenant 0's grant: remote access error\n"
	require.NoError(t, check(server, client))
	require.Error(t, check("tenant 0: intruder\ntenant 1: Hello from tenant 1\n", client), "the intruder's write arrived")
	require.Error(t, check(server, "tenant 0 wrote its slot\ntenant 1 wrote its slot\n"), "the intruder was not refused")
}
