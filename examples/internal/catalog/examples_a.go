package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gorpma/rpma/examples/internal/common"
)

// Examples 01 to 07 and log (set a): connections, reads and writes to
// volatile and persistent memory, flushes, multiple connections, the atomic
// write log, and the library's logging. Their arguments are those of
// librpma's run-all-examples.sh: <pmem-path> for the servers that take one
// (05 also "on", direct write to PMem, as make demo runs it), <pmem-path>
// 1024 for the clients that take one.
func init() {
	register(
		Example{
			Name:   "01-connection",
			Server: []string{},
			Client: []string{},
			Check:  aCheckConnection,
		},
		Example{
			Name:   "02-read-to-volatile",
			Server: []string{},
			Client: []string{},
			Check:  aCheckReadToVolatile,
		},
		Example{
			Name:   "03-read-to-persistent",
			Server: []string{},
			Client: []string{},
			PMem:   pmemArgs("03-read-to-persistent", nil),
			Check:  aCheckHello(false),
		},
		Example{
			Name:   "04-write-to-persistent",
			Server: []string{},
			Client: []string{},
			PMem:   pmemArgs("04-write-to-persistent", nil),
			Check:  aCheckHello(false),
		},
		Example{
			Name:   "05-flush-to-persistent",
			Server: []string{},
			Client: []string{},
			PMem:   pmemArgs("05-flush-to-persistent", []string{common.DirectWriteOn}),
			Check:  aCheckHello(true),
		},
		Example{
			Name:   "06-multiple-connections",
			Server: []string{},
			Client: []string{"8"},
			Check:  aCheckNames,
		},
		Example{
			Name:   "06scch-multiple-connections",
			Server: []string{},
			Client: []string{"8"},
			Check:  aCheckNames,
		},
		Example{
			Name:   "07-atomic-write",
			Server: []string{},
			Client: aWords07,
			PMem: func(pmem string) ([]string, []string) {
				return []string{pmemPath(pmem, "07-atomic-write")}, nil
			},
			Check: aCheckAtomicWrite,
		},
		Example{
			Name:  "log",
			Check: aCheckLog,
		},
	)
}

// aOne returns what follows prefix on the one line of out that starts with
// it.
func aOne(what, out, prefix string) (string, error) {
	vs := linesAfter(out, prefix)
	if len(vs) != 1 {
		return "", fmt.Errorf("%s printed %d lines %q, want 1", what, len(vs), prefix+"...")
	}
	return vs[0], nil
}

// aCheckConnection: each side received the other's greeting as private
// data.
func aCheckConnection(server, client string) error {
	s, err := aOne("server", server, "Received a message: ")
	if err != nil {
		return err
	}
	if s != common.HelloServerMsg {
		return fmt.Errorf("server received %q, the client sent %q", s, common.HelloServerMsg)
	}
	c, err := aOne("client", client, "Received a message: ")
	if err != nil {
		return err
	}
	if c != common.HelloClientMsg {
		return fmt.Errorf("client received %q, the server sent %q", c, common.HelloClientMsg)
	}
	return nil
}

// aCheckReadToVolatile: the client read what the server exposes.
func aCheckReadToVolatile(_, client string) error {
	c, err := aOne("client", client, "Read a message: ")
	if err != nil {
		return err
	}
	if c != common.HelloClientMsg {
		return fmt.Errorf("client read %q, the server exposes %q", c, common.HelloClientMsg)
	}
	return nil
}

// aCheckHello checks 03, 04 and 05: the server's new value is the
// client's greeting (what the server read, or what the client wrote), and
// the client then translated it into the other greeting. flush: the client
// (05) says which flush type it used.
func aCheckHello(flush bool) func(server, client string) error {
	return func(server, client string) error {
		next, err := aOne("client", client, "Next value: ")
		if err != nil {
			return err
		}
		got, err := aOne("server", server, "New value: ")
		if err != nil {
			return err
		}
		if got != next {
			return fmt.Errorf("server's new value is %q, the client's greeting %q", got, next)
		}
		tr, err := aOne("client", client, "Translation: ")
		if err != nil {
			return err
		}
		var want string
		switch next {
		case common.HelloStrings[common.LangEn]:
			want = common.HelloStrings[common.LangEs]
		case common.HelloStrings[common.LangEs]:
			want = common.HelloStrings[common.LangEn]
		default:
			return fmt.Errorf("client's greeting %q is neither greeting", next)
		}
		if tr != want {
			return fmt.Errorf("client translated %q into %q, want %q", next, tr, want)
		}
		if flush && !strings.Contains(client, "RPMA_FLUSH_TYPE_PERSISTENT is supported\n") &&
			!strings.Contains(client, "RPMA_FLUSH_TYPE_PERSISTENT is NOT supported, RPMA_FLUSH_TYPE_VISIBILITY is used instead\n") {
			return errors.New("client did not say which flush type it used")
		}
		return nil
	}
}

// aCheckNames checks 06 and 06scch: the server read the names of its
// clients, in order.
func aCheckNames(server, client string) error {
	if !strings.HasPrefix(server, "Today I have got in touch with:\n") {
		return errors.New("server did not start its list")
	}
	sent := linesAfter(client, "My names is: ")
	read := linesAfter(server, "- ")
	if len(sent) == 0 {
		return errors.New("client printed no name")
	}
	if !slices.Equal(read, sent) {
		return fmt.Errorf("server read the names %q, the clients sent %q", read, sent)
	}
	return nil
}

// aWords07 are the words 07's client appends to the server's log.
var aWords07 = []string{"1st_word", "2nd_word", "3rd_word"}

// aCheckAtomicWrite checks 07: the server's log ends with exactly the
// client's words, one per line, after the words of earlier runs (which
// PMem keeps), whose size the client read as the log's used value.
func aCheckAtomicWrite(server, client string) error {
	u, err := aOne("client", client, "used value: ")
	if err != nil {
		return err
	}
	used, err := strconv.ParseUint(u, 10, 64)
	if err != nil {
		return fmt.Errorf("client's used value: %w", err)
	}
	if !strings.HasSuffix(server, "\n") {
		return fmt.Errorf("server's log %q does not end with a word", server)
	}
	words := strings.Split(strings.TrimSuffix(server, "\n"), "\n")
	if len(words) < len(aWords07) {
		return fmt.Errorf("server's log has %d words, the client wrote %d", len(words), len(aWords07))
	}
	old, last := words[:len(words)-len(aWords07)], words[len(words)-len(aWords07):]
	if !slices.Equal(last, aWords07) {
		return fmt.Errorf("server's log ends with %q, the client wrote %q", last, aWords07)
	}
	size := uint64(common.LogDataOffset)
	for _, w := range old {
		size += uint64(len(w)) + 1
	}
	if size != used {
		return fmt.Errorf("client read used %d, but the earlier words %q end at %d", used, old, size)
	}
	return nil
}

// aLogOutput is what the log example prints on stdout (librpma's, down to
// the missing newline after "syslog.").
const aLogOutput = "Let's write messages to stderr and syslog\n" +
	"Use: \n$ sudo tail -n 60 /var/log/syslog | grep rpma\nto see messages in the syslog." +
	"Let's use custom log function to write messages to stderr\nNo message should be written to syslog\n"

// aCheckLog checks the log example's stdout; the example itself checks
// that its custom log function got every message (else it fails).
func aCheckLog(_, out string) error {
	if out != aLogOutput {
		return fmt.Errorf("log printed %q, want %q", out, aLogOutput)
	}
	return nil
}
