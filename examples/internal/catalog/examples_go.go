package catalog

import (
	"fmt"
	"regexp"
	"strconv"
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
	)
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
