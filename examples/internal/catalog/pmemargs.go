package catalog

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gorpma/rpma/examples/internal/common"
)

// pmemFileSize is the size of the file each example gets in an FsDAX
// mount (make demo -pmem-mode fsdax): enough for the server's data at
// offset 0 and the client's at offset 1024.
const pmemFileSize = 1 << 20

// pmemPath is the persistent memory an example maps: pmem itself (a
// Device DAX, or a file), or, when pmem is a directory (the FsDAX mount),
// the file NAME.pmem in it, created with pmemFileSize bytes if missing,
// since librpma's examples (and ours) map an existing file and never
// create one.
func pmemPath(pmem, name string) string {
	st, err := os.Stat(pmem)
	if err != nil || !st.IsDir() {
		return pmem
	}
	path := filepath.Join(pmem, name+".pmem")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644); err == nil {
			f.Truncate(pmemFileSize)
			f.Close()
		}
	}
	return path
}

// pmemArgs gives the server <pmem-path> (plus extra) and the client
// <pmem-path> <pmem-offset> as run-all-examples.sh does.
func pmemArgs(name string, extra []string) func(string) ([]string, []string) {
	return func(pmem string) ([]string, []string) {
		path := pmemPath(pmem, name)
		return append([]string{path}, extra...), []string{path, strconv.Itoa(common.PMemClientOffset)}
	}
}
