// Package common holds what the Go ports of librpma's examples share with
// each other and, byte for byte, with librpma's C examples
// (github.com/pmem/rpma, examples/): the private-data layouts exchanged at
// connection time, the memory layouts one side reads or writes remotely,
// the PMem signature convention, the constants, and the few libc behaviours
// (strtoul, srand/rand) whose results a C peer or a test can observe.
//
// Everything here is pure Go and works on plain byte slices, so it runs on
// DRAM buffers, PMem mappings (the library's pmem.Region) and test buffers
// alike. Byte order: the C examples copy their structs in host order; every
// target librpma supports is little-endian (x86-64, aarch64, ppc64le), so
// the layouts here are little-endian and documented at the byte level. See
// EXAMPLES.md in this directory for the behaviour of each example.
//
// Layouts (all verified against the C definitions compiled with gcc on
// x86-64):
//
//	struct common_data (28 B)  data_offset u16 @0, mr_desc_size u8 @2,
//	                           pcfg_desc_size u8 @3, descriptors[24] @4
//	struct hello_t (1028 B)    lang u32 @0 (enum lang_t), str[1024] @4
//	struct log (1040 B, ex.07) signature[8] @0 ("LOG\0\0\0\0\0"),
//	                           used u64 @8, data[1024] @16
//	06 client name             char[32], NUL-terminated, zero-padded
//	08/08srq/12/13 message     u64 counter (MSG_SIZE 8), UINT64_MAX = done
//	10 connect private data    u32 immediate value (4 B)
//	11 written data            1024 B, the first 4 are the u32 immediate
//
// The GPSPM protobuf messages of examples 09/09scch live in the gpspm
// subpackage.
package common
