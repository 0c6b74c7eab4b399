//go:build linux

package vm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Frame is one Ethernet frame a Wire carried, in the order the host saw
// the frames leave their VMs.
type Frame struct {
	From int    // the sending node's index
	Data []byte // the guest's Ethernet frame
}

// Capture records the frames a Wire carries. A Wire is qemu UDP sockets on
// the host's loopback, so one AF_PACKET socket there sees both
// directions, in one order, with one clock: the order in which the two
// qemu processes sent them. It needs CAP_NET_RAW (make test runs as
// root).
type Capture struct {
	fd    int
	ports [2]int

	mu     sync.Mutex
	frames []Frame
	err    error
	stop   chan struct{}
	done   chan struct{}
}

// captureBuffer is the socket's receive buffer: at TCG's packet rates it
// holds minutes of the wire's traffic, so the reader never falls behind
// far enough to drop.
const captureBuffer = 64 << 20

// Capture starts recording w's frames.
func (w *Wire) Capture() (*Capture, error) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return nil, fmt.Errorf("capture: socket(AF_PACKET): %w (needs CAP_NET_RAW)", err)
	}
	c := &Capture{fd: fd, ports: w.Ports, stop: make(chan struct{}), done: make(chan struct{})}
	setup := func() error {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, captureBuffer); err != nil {
			return fmt.Errorf("SO_RCVBUFFORCE: %w", err)
		}
		tv := unix.NsecToTimeval((100 * time.Millisecond).Nanoseconds())
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return fmt.Errorf("SO_RCVTIMEO: %w", err)
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: lo.Index}); err != nil {
			return fmt.Errorf("bind to lo: %w", err)
		}
		// Counted from here: what an earlier moment queued is not ours.
		_, err := unix.GetsockoptTpacketStats(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
		return err
	}
	if err := setup(); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("capture: %w", err)
	}
	go c.read()
	return c, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// read records frames until Stop.
func (c *Capture) read() {
	defer close(c.done)
	buf := make([]byte, 1<<16)
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		n, from, err := unix.Recvfrom(c.fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			c.fail(fmt.Errorf("capture: recvfrom: %w", err))
			return
		}
		// On the loopback each packet is seen twice: as it is sent
		// (PACKET_OUTGOING) and as it is received. The sent copy is the
		// moment the VM put it on the wire.
		if ll, ok := from.(*unix.SockaddrLinklayer); !ok || ll.Pkttype != unix.PACKET_OUTGOING {
			continue
		}
		if f, ok := c.wireFrame(buf[:n]); ok {
			c.mu.Lock()
			c.frames = append(c.frames, f)
			c.mu.Unlock()
		}
	}
}

func (c *Capture) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

// wireFrame returns the guest frame a loopback packet carries, if it is
// a UDP datagram between the wire's two ports.
func (c *Capture) wireFrame(b []byte) (Frame, bool) {
	const eth, udp = 14, 8
	if len(b) < eth+20+udp || binary.BigEndian.Uint16(b[12:]) != 0x0800 {
		return Frame{}, false
	}
	ip := b[eth:]
	ihl := int(ip[0]&0x0F) * 4
	if ip[9] != 17 || len(ip) < ihl+udp {
		return Frame{}, false
	}
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if total < ihl+udp || total > len(ip) {
		return Frame{}, false
	}
	src, dst := int(binary.BigEndian.Uint16(ip[ihl:])), int(binary.BigEndian.Uint16(ip[ihl+2:]))
	for from := range c.ports {
		if src == c.ports[from] && dst == c.ports[1-from] {
			return Frame{From: from, Data: append([]byte(nil), ip[ihl+udp:total]...)}, true
		}
	}
	return Frame{}, false
}

// Stop ends the capture and returns the frames in the order they left
// their VMs. It fails if the kernel dropped any packet on the socket
// (the capture would have holes) or the reader failed.
func (c *Capture) Stop() ([]Frame, error) {
	close(c.stop)
	<-c.done
	stats, err := unix.GetsockoptTpacketStats(c.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	unix.Close(c.fd)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.frames, c.err
	}
	if err != nil {
		return c.frames, fmt.Errorf("capture: PACKET_STATISTICS: %w", err)
	}
	if stats.Drops != 0 {
		return c.frames, fmt.Errorf("capture: the kernel dropped %d of %d packets: the capture has holes", stats.Drops, stats.Packets)
	}
	return c.frames, nil
}
