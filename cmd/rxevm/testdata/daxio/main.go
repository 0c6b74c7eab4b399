// Command daxio writes or reads a marker at the start of a Device DAX
// device (which takes no write(2): it must be mapped). The harness tests use
// it to prove that the emulated NVDIMM keeps what reached it.
//
//	daxio write DEV TEXT
//	daxio read DEV LEN
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: daxio write DEV TEXT | daxio read DEV LEN")
		os.Exit(2)
	}
	f, err := os.OpenFile(os.Args[2], os.O_RDWR, 0)
	check(err)
	m, err := syscall.Mmap(int(f.Fd()), 0, 2<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	check(err)
	switch os.Args[1] {
	case "write":
		copy(m, os.Args[3])
		// Device DAX maps the NVDIMM directly; on this emulated one a store
		// reaches the backing file through the host page cache, so no
		// cache flush is needed for the power-loss check.
		fmt.Println("written")
	case "read":
		n, err := strconv.Atoi(os.Args[3])
		check(err)
		fmt.Printf("%s\n", m[:n])
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "daxio:", err)
		os.Exit(1)
	}
}
