//go:build linux

package vm

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// job is what the host tells the guest agent, as job.json in the control
// directory.
type job struct {
	Argv []string `json:"argv"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
	// Node describes this VM's place on the (virtual) wire.
	Node nodeSpec `json:"node"`
	// Userspace names the guest userspace ("" for the host's) and
	// UserspaceRoot is its root, which the guest lays over its own.
	Userspace     string `json:"userspace,omitempty"`
	UserspaceRoot string `json:"userspace_root,omitempty"`
	// HoldStart: the command starts only on the host's "start" (the
	// start barrier of a multi-node run).
	HoldStart bool `json:"hold_start,omitempty"`
}

// nodeSpec is one VM's identity: its network (a single VM puts rxe0 on a
// dummy netdev, two nodes put it on a virtio NIC on the wire) and its
// persistent memory.
type nodeSpec struct {
	Index    int    `json:"index"`
	IP       string `json:"ip"`                // e.g. 192.0.2.1
	Prefix   int    `json:"prefix"`            // e.g. 24
	Netdev   string `json:"netdev"`            // "dummy" or "virtio"
	PeerIP   string `json:"peer_ip,omitempty"` // the other node's address (virtio)
	NetEm    string `json:"netem,omitempty"`   // tc netem parameters (virtio)
	PMemMode string `json:"pmem,omitempty"`    // "", "devdax" or "fsdax"
}

// modulesFor says which optional module sets the guest's init loads.
func modulesFor(n nodeSpec) string {
	if n.PMemMode != "" {
		return "pmem\n"
	}
	return ""
}

// Files of the control directory.
const (
	ctlJob       = "job.json"
	ctlAgent     = "agent"
	ctlTmpDir    = "tmpdir"
	ctlModules   = "modules"
	ctlStarted   = "started"
	ctlStatus    = "status"
	ctlDmesg     = "dmesg"
	ctlBootError = "boot-error"
)

func writeJob(dir string, j *job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ctlJob), b, 0o644)
}

func readJob(dir string) (*job, error) {
	b, err := os.ReadFile(filepath.Join(dir, ctlJob))
	if err != nil {
		return nil, err
	}
	var j job
	return &j, json.Unmarshal(b, &j)
}

// writeFileAtomic writes via a temporary file and rename, and syncs, so
// the host never reads half a status.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	f.Sync()
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
