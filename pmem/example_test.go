package pmem_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gorpma/rpma/pmem"
)

// Map persistent memory and persist what was written with the call its
// kind needs: Region.Persist picks it (a CPU cache flush for Device DAX
// and MAP_SYNC files, msync for a plain file). A path under /dev/dax...
// maps Device DAX; this file, on a file system without DAX, is a plain
// shared mapping persisted with msync.
func ExampleMap() {
	dir, err := os.MkdirTemp("", "pmem-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pool")

	r, err := pmem.Map(path, 1<<20) // created and grown to 1 MiB
	if err != nil {
		log.Fatal(err)
	}
	n := copy(r.Bytes()[4096:], "survives a crash")
	if err := r.Persist(4096, n); err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Kind(), r.Kind().IsPMem(), r.Len())
	if err := r.Close(); err != nil { // refused while registered (mr.Reg)
		log.Fatal(err)
	}

	b, _ := os.ReadFile(path)
	fmt.Printf("%s\n", b[4096:4096+n])
	// Output:
	// file (msync) false 1048576
	// survives a crash
}

// Alloc maps page-aligned DRAM for buffers to register: never Go heap
// memory, which the device would read and write behind the runtime's
// back.
func ExampleAlloc() {
	r, err := pmem.Alloc(10000) // rounded up to whole pages inside
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Println(r.Kind(), r.Len(), r.Persist(0, r.Len())) // nothing to persist
	// Output:
	// anonymous memory (DRAM) 10000 <nil>
}
