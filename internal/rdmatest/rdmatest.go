package rdmatest

import (
	"os"
	"path/filepath"
	"testing"
)

// Environment variables read by the helpers; rxevm sets the first three
// inside its VM.
const (
	EnvIP      = "RPMA_TEST_IP"          // address of the RDMA netdev to test on
	EnvRequire = "RPMA_TEST_REQUIRE_RXE" // "1": lack of RDMA fails instead of skipping
	EnvKernel  = "RPMA_TEST_KERNEL"      // the guest kernel release
	// EnvSysfs overrides /sys/class/infiniband, where devices are looked
	// for. Only the helpers' own tests set it (to simulate a host without
	// RDMA inside the VM).
	EnvSysfs = "RPMA_TEST_SYSFS"
)

// Required reports whether lack of RDMA must fail tests.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

func sysfsDir() string {
	if d := os.Getenv(EnvSysfs); d != "" {
		return d
	}
	return "/sys/class/infiniband"
}

// Devices lists the RDMA devices the kernel exposes (by sysfs, so the check
// itself needs no cgo).
func Devices() []string {
	ents, _ := filepath.Glob(filepath.Join(sysfsDir(), "*"))
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, filepath.Base(e))
	}
	return names
}

// skip skips tb, or fails it when RDMA is required.
func skip(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if Required() {
		tb.Fatalf("RDMA required ("+EnvRequire+"=1) but "+format, args...)
	}
	tb.Skipf(format, args...)
}

// SkipIfNoRDMA skips the test when there is no RDMA device or no test
// address, and fails it instead when RPMA_TEST_REQUIRE_RXE=1.
func SkipIfNoRDMA(tb testing.TB) {
	tb.Helper()
	if len(Devices()) == 0 {
		skip(tb, "no RDMA device in %s (run the test in the VM: make test)", sysfsDir())
	}
	if os.Getenv(EnvIP) == "" {
		skip(tb, "%s is not set", EnvIP)
	}
}

// IP returns the address to test on, after SkipIfNoRDMA.
func IP(tb testing.TB) string {
	tb.Helper()
	SkipIfNoRDMA(tb)
	return os.Getenv(EnvIP)
}

// Kernel returns the kernel release the test runs on: RPMA_TEST_KERNEL, or
// "" outside the VM.
func Kernel() string { return os.Getenv(EnvKernel) }

// Persistent-memory variables: rxevm -pmem sets the first two; the test
// scripts set the third for the VM tiers that boot with an NVDIMM.
const (
	EnvPMem        = "RPMA_TEST_PMEM"         // /dev/dax0.0, or the FsDAX mount point
	EnvPMemMode    = "RPMA_TEST_PMEM_MODE"    // devdax or fsdax
	EnvRequirePMem = "RPMA_TEST_REQUIRE_PMEM" // "1": lack of pmem fails instead of skipping
)

// PMem returns the emulated NVDIMM to test on and its mode ("devdax" or
// "fsdax"). It skips when there is none, and fails instead when
// RPMA_TEST_REQUIRE_PMEM=1.
func PMem(tb testing.TB) (path, mode string) {
	tb.Helper()
	path, mode = os.Getenv(EnvPMem), os.Getenv(EnvPMemMode)
	if path == "" {
		if os.Getenv(EnvRequirePMem) == "1" {
			tb.Fatalf("persistent memory required (%s=1) but %s is not set", EnvRequirePMem, EnvPMem)
		}
		tb.Skipf("%s is not set (run in the VM with rxevm -pmem)", EnvPMem)
	}
	return path, mode
}
