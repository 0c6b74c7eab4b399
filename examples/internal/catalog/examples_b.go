package catalog

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gorpma/rpma/examples/internal/common"
)

// Examples 08 to 13: messages, GPSPM, immediate data, receive CQs and
// shared receive queues, with run-all-examples.sh's arguments.
func init() {
	register(
		Example{
			Name:   "08-messages-ping-pong",
			Server: []string{},
			Client: []string{"7", "3"}, // while (--rounds): 2 exchanges
			Check:  bCheckPingPong("", "", 7, 2),
		},
		Example{
			Name:   "08srq-simple-messages-ping-pong-with-srq",
			Server: []string{},         // the SRQ's own receive CQ ("s")
			Client: []string{"7", "3"}, // do { } while (--rounds): 3 exchanges
			Check:  bCheckPingPong("", "", 7, 3),
		},
		Example{
			Name:   "09-flush-to-persistent-GPSPM",
			Server: []string{},
			Client: []string{},
			PMem:   pmemArgs("09-flush-to-persistent-GPSPM", nil),
			Check:  bCheckGPSPM,
		},
		Example{
			Name:   "09scch-flush-to-persistent-GPSPM",
			Server: []string{},
			Client: []string{},
			PMem:   pmemArgs("09scch-flush-to-persistent-GPSPM", nil),
			Check:  bCheckGPSPM,
		},
		Example{
			Name:   "10-send-with-imm",
			Server: []string{},
			Client: []string{"1234", "1st_word"},
			Check:  bCheckSendWithImm("1st_word", 1234),
		},
		Example{
			Name:   "11-write-with-imm",
			Server: []string{},
			Client: []string{"1234"},
			Check:  bCheckWriteWithImm(1234),
		},
		Example{
			Name:   "12-receive-completion-queue",
			Server: []string{},
			Client: []string{"7", "3"}, // while (--rounds): 2 exchanges
			Check:  bCheckPingPong("SERVER: ", "CLIENT: ", 7, 2),
		},
		Example{
			Name:   "12scch-receive-completion-queue",
			Server: []string{},
			Client: []string{"7", "3"},
			Check:  bCheckPingPong("SERVER: ", "CLIENT: ", 7, 2),
		},
		Example{
			// run-all-examples.sh runs three clients at once (seeds 1 5
			// 10) against a 3-second listening window; the catalog runs
			// one client per example, as run-all's integration mode does
			// (seed 1), and gives it 10 s to start, as a client can take a
			// few seconds to start in the VM.
			Name:   "13-messages-ping-pong-with-srq",
			Server: []string{"10"},
			Client: []string{"1", "3"},
			Check:  bCheckSRQPingPong(1, 3),
		},
	)
}

// counters parses the counter that follows prefix on each line of out.
func bCounters(out, prefix string) ([]uint64, error) {
	var ns []uint64
	for _, v := range linesAfter(out, prefix) {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", prefix, v, err)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// series returns n counters from first on.
func bSeries(first uint64, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = first + uint64(i)
	}
	return s
}

// bCheckPingPong checks a ping-pong (08, 08srq, 12, 12scch): the server
// received exactly the counters the client sent, seed on, and answered each
// with the counter plus one, which is what the client received, over the
// given number of exchanges. serverPrefix and clientPrefix precede
// "Value sent: " and "Value received: " ("SERVER: ", "CLIENT: " in 12).
func bCheckPingPong(serverPrefix, clientPrefix string, seed uint64, exchanges int) func(server, client string) error {
	return func(server, client string) error {
		var got [4][]uint64
		for i, q := range []struct{ out, prefix string }{
			{client, clientPrefix + "Value sent: "},
			{server, serverPrefix + "Value received: "},
			{server, serverPrefix + "Value sent: "},
			{client, clientPrefix + "Value received: "},
		} {
			ns, err := bCounters(q.out, q.prefix)
			if err != nil {
				return err
			}
			got[i] = ns
		}
		cSent, sRecv, sSent, cRecv := got[0], got[1], got[2], got[3]
		if want := bSeries(seed, exchanges); !slices.Equal(cSent, want) {
			return fmt.Errorf("client sent %v, want %v", cSent, want)
		}
		if !slices.Equal(sRecv, cSent) {
			return fmt.Errorf("server received %v, client sent %v", sRecv, cSent)
		}
		if want := bSeries(seed+1, exchanges); !slices.Equal(sSent, want) {
			return fmt.Errorf("server sent %v, want %v", sSent, want)
		}
		if !slices.Equal(cRecv, sSent) {
			return fmt.Errorf("client received %v, server sent %v", cRecv, sSent)
		}
		return nil
	}
}

var (
	bSRQClientRE = regexp.MustCompile(`^\[client #\d+\] value (sent|received): (\d+)$`)
	bSRQServerRE = regexp.MustCompile(`^\[server\] value (received|sent): (\d+) from the connection \[qp#\d+\]$`)
)

// bSRQValues collects the counters of 13's lines by direction.
func bSRQValues(out string, re *regexp.Regexp) (map[string][]uint64, error) {
	vs := map[string][]uint64{}
	for _, l := range strings.Split(out, "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, err := strconv.ParseUint(m[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", l, err)
		}
		vs[m[1]] = append(vs[m[1]], n)
	}
	return vs, nil
}

// bCheckSRQPingPong checks 13 with one client: it sent seed..seed+rounds-1,
// which the server received (in whatever slots), and received back what the
// server sent, each counter plus one.
func bCheckSRQPingPong(seed uint64, rounds int) func(server, client string) error {
	return func(server, client string) error {
		if err := contains("server", server, "The client #1 has been connected.\n", "Server ended listening.\n"); err != nil {
			return err
		}
		c, err := bSRQValues(client, bSRQClientRE)
		if err != nil {
			return err
		}
		s, err := bSRQValues(server, bSRQServerRE)
		if err != nil {
			return err
		}
		if want := bSeries(seed, rounds); !slices.Equal(c["sent"], want) {
			return fmt.Errorf("client sent %v, want %v", c["sent"], want)
		}
		if !slices.Equal(s["received"], c["sent"]) {
			return fmt.Errorf("server received %v, client sent %v", s["received"], c["sent"])
		}
		if want := bSeries(seed+1, rounds); !slices.Equal(s["sent"], want) {
			return fmt.Errorf("server sent %v, want %v", s["sent"], want)
		}
		if !slices.Equal(c["received"], s["sent"]) {
			return fmt.Errorf("client received %v, server sent %v", c["received"], s["sent"])
		}
		return nil
	}
}

// one returns the single value that follows prefix in out.
func bOne(what, out, prefix string) (string, error) {
	vs := linesAfter(out, prefix)
	if len(vs) != 1 {
		return "", fmt.Errorf("%s printed %d lines %q..., want 1", what, len(vs), prefix)
	}
	return vs[0], nil
}

var bFlushRE = regexp.MustCompile(`^\{offset: 0x([0-9A-F]+), length: 0x([0-9A-F]+), op_context: 0x([0-9A-F]+)\}$`)

// bCheckGPSPM checks 09 and 09scch: the server's memory ends up holding the
// greeting the client wrote ("New value" = "Next value"), the flush request
// named the 1 KiB the client wrote where the server said (data offset 0 in
// DRAM, 17 after the signature in PMem) with op_context 0xF01D, and the
// client then translated its greeting into the other one.
func bCheckGPSPM(server, client string) error {
	next, err := bOne("client", client, "Next value: ")
	if err != nil {
		return err
	}
	newValue, err := bOne("server", server, "New value: ")
	if err != nil {
		return err
	}
	if newValue != next {
		return fmt.Errorf("server's new value %q, client's next value %q", newValue, next)
	}
	flush, err := bOne("server", server, "Flush request received: ")
	if err != nil {
		return err
	}
	m := bFlushRE.FindStringSubmatch(flush)
	if m == nil {
		return fmt.Errorf("server's flush request %q", flush)
	}
	if (m[1] != "0" && m[1] != strconv.FormatInt(int64(common.SignatureLen), 16)) ||
		m[2] != strconv.FormatInt(common.HelloStrSize, 16) || m[3] != "F01D" {
		return fmt.Errorf("server's flush request %q, want offset 0x0 or 0x11, length 0x400, op_context 0xF01D", flush)
	}
	translation, err := bOne("client", client, "Translation: ")
	if err != nil {
		return err
	}
	i := slices.Index(common.HelloStrings[:], next)
	if i < 0 || translation != common.HelloStrings[common.NextLang(common.Lang(i))] {
		return fmt.Errorf("client translated %q into %q", next, translation)
	}
	return nil
}

var (
	bSendImmClientRE  = regexp.MustCompile(`(?m)^Sending value '(.*)' with immediate data '(\d+)'$`)
	bSendImmServerRE  = regexp.MustCompile(`(?m)^Received value '(.*)' with immediate data '(\d+)'$`)
	bWriteImmClientRE = regexp.MustCompile(`(?m)^Writing value '(\d+)' with immediate data '(\d+)'$`)
	bWriteImmServerRE = regexp.MustCompile(`(?m)^The value '(\d+)' was written together with immediate data '(\d+)'$`)
)

// bCheckSendWithImm checks 10: the server received the word and the
// immediate value the client sent.
func bCheckSendWithImm(word string, imm uint32) func(server, client string) error {
	return func(server, client string) error {
		c := bSendImmClientRE.FindStringSubmatch(client)
		s := bSendImmServerRE.FindStringSubmatch(server)
		if c == nil || s == nil {
			return fmt.Errorf("client sent %q, server received %q", c, s)
		}
		want := []string{word, strconv.FormatUint(uint64(imm), 10)}
		if !slices.Equal(c[1:], want) || !slices.Equal(s[1:], c[1:]) {
			return fmt.Errorf("client sent %q, server received %q, want %q", c[1:], s[1:], want)
		}
		return nil
	}
}

// bCheckWriteWithImm checks 11: the server found the value the client wrote
// and the immediate value it sent with it.
func bCheckWriteWithImm(imm uint32) func(server, client string) error {
	return func(server, client string) error {
		c := bWriteImmClientRE.FindStringSubmatch(client)
		s := bWriteImmServerRE.FindStringSubmatch(server)
		if c == nil || s == nil {
			return fmt.Errorf("client wrote %q, server found %q", c, s)
		}
		v := strconv.FormatUint(uint64(imm), 10)
		if want := []string{v, v}; !slices.Equal(c[1:], want) || !slices.Equal(s[1:], c[1:]) {
			return fmt.Errorf("client wrote %q, server found %q, want %q", c[1:], s[1:], want)
		}
		return nil
	}
}
