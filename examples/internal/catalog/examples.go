package catalog

import (
	"fmt"
	"strings"
)

// contains checks that out has every one of want.
func contains(what, out string, want ...string) error {
	for _, w := range want {
		if !strings.Contains(out, w) {
			return fmt.Errorf("%s output lacks %q", what, w)
		}
	}
	return nil
}

func init() { register(base...) }

// base are the checks of the setup itself, run before the examples.
var base = []Example{
	{
		Name: "devinfo",
		Check: func(_, c string) error {
			return contains("devinfo", c, "rxe0: port 1 ACTIVE")
		},
	},
	{
		// Not ours: rdma-core's rping, the sanity check of the RDMA setup.
		Name:   "rping",
		Bin:    []string{"rping", "rping"},
		Server: []string{"-s", "-a", "{addr}", "-p", "{port}", "-C", "3"},
		Client: []string{"-c", "-a", "{addr}", "-p", "{port}", "-C", "3", "-v"},
		Check: func(_, c string) error {
			return contains("rping client", c, "rdma-ping-0: ", "rdma-ping-2: ")
		},
	},
}
