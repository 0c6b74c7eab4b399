package catalog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The examples of what librpma does not have.
func init() {
	register(
		Example{
			Name:   "counter",
			Server: []string{"4"},
			Client: []string{"4", "50"},
			Check:  checkCounter(4, 50),
		},
		Example{
			// 16 goroutines on one connection append 32 records each,
			// each durable before its call returns.
			Name:   "durable-log",
			Server: []string{},
			Client: []string{"16", "32"},
			PMem: func(pmem string) ([]string, []string) {
				return []string{pmemPath(pmem, "durable-log")}, nil
			},
			Check: checkDurableLog(16, 32),
		},
		Example{
			Name:   "grant",
			Server: []string{"2"},
			Client: []string{"2"},
			Check:  checkGrant(2),
		},
	)
}

// checkGrant: each tenant's greeting, and nothing else, reached its slot
// (the intruder's write did not), and the last tenant was refused the
// first one's grant.
func checkGrant(tenants int) func(server, client string) error {
	return func(server, client string) error {
		var wantS, wantC strings.Builder
		for i := range tenants {
			fmt.Fprintf(&wantS, "tenant %d: Hello from tenant %d\n", i, i)
			fmt.Fprintf(&wantC, "tenant %d wrote its slot\n", i)
		}
		if tenants > 1 {
			fmt.Fprintf(&wantC, "tenant %d with tenant 0's grant: remote access error\n", tenants-1)
		}
		if server != wantS.String() {
			return fmt.Errorf("server printed %q, want %q", server, wantS.String())
		}
		if client != wantC.String() {
			return fmt.Errorf("client printed %q, want %q", client, wantC.String())
		}
		return nil
	}
}

var counterClient = regexp.MustCompile(`(?m)^connections: (\d+), adds: (\d+), distinct old values: (\d+)\nlock taken and released: (\d+) times, waited \d+ times\n\z`)

// checkCounter: the server's counter is the sum of every fetch-and-add,
// its locked counter one per connection and its lock free, and the client
// got as many distinct old values as it added.
func checkCounter(connections, adds int) func(server, client string) error {
	return func(server, client string) error {
		want := fmt.Sprintf("counter: %d\nlocked counter: %d\nlock: 0\n", connections*adds, connections)
		if server != want {
			return fmt.Errorf("server printed %q, want %q", server, want)
		}
		m := counterClient.FindStringSubmatch(client)
		if m == nil {
			return fmt.Errorf("client printed %q", client)
		}
		for i, w := range []int{connections, adds, connections * adds, connections} {
			if got, _ := strconv.Atoi(m[i+1]); got != w {
				return fmt.Errorf("client printed %q: field %d is %d, want %d", client, i+1, got, w)
			}
		}
		return nil
	}
}

// checkDurableLog: every record each goroutine appended was acknowledged
// and read back, and the server's log holds exactly those.
func checkDurableLog(goroutines, perGoroutine int) func(server, client string) error {
	return func(server, client string) error {
		n := goroutines * perGoroutine
		want := fmt.Sprintf("DURABLE-LOG goroutines=%d appended=%d missing=0\n", goroutines, n)
		if client != "flush: persistent\n"+want && client != "flush: visibility\n"+want {
			return fmt.Errorf("client printed %q, want a flush line and %q", client, want)
		}
		if want := fmt.Sprintf("log holds %d records\n", n); server != want {
			return fmt.Errorf("server printed %q, want %q", server, want)
		}
		return nil
	}
}
