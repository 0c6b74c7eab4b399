//go:build linux

package vm

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The start barrier of a multi-node run. Each guest of a Node with
// HoldStart sets up (rxe, NVDIMM, ports), reports ready with a file in its
// control directory and waits for the host's "start" line on the control
// port; the host sends it to every node once all are ready. So no node's
// command runs while another node may still crash while booting, and a
// run whose VM crashed before the barrier can be booted again as a whole
// without any command having run twice.

// ctlReady is the file a held guest writes when it is set up.
const ctlReady = "ready"

// Ready reports whether the held guest has set up and waits for Release.
func (m *Machine) Ready() bool { return m.wrote(ctlReady) }

// Release lets a held guest start its command.
func (m *Machine) Release() error {
	_, err := fmt.Fprintf(m.st.host[streamCtl], "start\n")
	return err
}

// barrier is the state of the start barrier of a multi-node run.
type barrier int

const (
	barrierWaiting  barrier = iota // some node is still setting up
	barrierReleased                // every node was ready and released
	barrierBroken                  // a node ended before every node was ready
)

// releaseWhenReady releases every machine once all are ready. A machine
// that ended first (a boot crash, a setup error, a kill) breaks the
// barrier and is returned.
func releaseWhenReady(machines []*Machine) (barrier, *Machine, error) {
	for _, m := range machines {
		select {
		case <-m.Done():
			return barrierBroken, m, nil
		default:
		}
	}
	for _, m := range machines {
		if !m.Ready() {
			return barrierWaiting, nil, nil
		}
	}
	for _, m := range machines {
		if err := m.Release(); err != nil {
			return barrierBroken, nil, fmt.Errorf("rxevm: %sreleasing the command: %w", m.label(), err)
		}
	}
	return barrierReleased, nil, nil
}

// endedFirst is the machine whose result is the run's when the barrier
// broke: the one that ended by itself (found by the barrier, else the
// first machine nobody killed), or nil.
func endedFirst(ended *Machine, machines []*Machine) *Machine {
	if ended != nil {
		return ended
	}
	for _, m := range machines {
		if !m.wasKilled() {
			return m
		}
	}
	return nil
}

// awaitStart is the guest's side: it reports ready and serves the control
// port until the host says "start" (true) or sends signal n, which the
// command that never started takes as its status 128+n (false).
func awaitStart(ctl *bufio.Scanner, ctlDir string) (start bool, status int, err error) {
	if err := os.WriteFile(filepath.Join(ctlDir, ctlReady), nil, 0o644); err != nil {
		return false, 0, err
	}
	for ctl.Scan() {
		f := strings.Fields(ctl.Text())
		switch {
		case len(f) == 1 && f[0] == "start":
			return true, 0, nil
		case len(f) == 2 && f[0] == "signal":
			if n, err := strconv.Atoi(f[1]); err == nil {
				return false, 128 + n, nil
			}
		case len(f) == 1 && f[0] == "dump":
			answerDump(ctlDir)
		}
	}
	if err := ctl.Err(); err != nil {
		return false, 0, fmt.Errorf("control port: %w", err)
	}
	return false, 0, fmt.Errorf("control port: closed before start")
}
