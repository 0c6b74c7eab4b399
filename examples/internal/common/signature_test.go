package common

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

type persistCall struct{ off, n int }

// recorder returns a PersistFunc that records its calls together with a
// snapshot of the bytes it was asked to persist.
func recorder(mem *[]byte) (PersistFunc, *[]persistCall, *[][]byte) {
	var calls []persistCall
	var data [][]byte
	return func(off, n int) error {
		calls = append(calls, persistCall{off, n})
		data = append(data, bytes.Clone((*mem)[off:off+n]))
		return nil
	}, &calls, &data
}

var sigBytes = []byte("RPMA_EXAMPLE_SIG\x00")

// The servers (03, 04, 05, 09, 09scch): offset 0, size HELLO_STR_SIZE, no
// init function: one NUL at 17 persisted (1 byte), then the signature at 0
// persisted (17 bytes).
func TestSignatureServerFresh(t *testing.T) {
	mem := bytes.Repeat([]byte{0xab}, 4096)
	persist, calls, data := recorder(&mem)
	res, err := SignatureCheck{Size: HelloStrSize, Persist: persist}.Apply(mem)
	require.NoError(t, err)
	require.Equal(t, SignatureResult{DataOffset: 17, Initialized: true}, res)
	require.Equal(t, []persistCall{{17, 1}, {0, 17}}, *calls)
	require.Equal(t, [][]byte{{0}, sigBytes}, *data)

	want := bytes.Repeat([]byte{0xab}, 4096)
	copy(want, sigBytes)
	want[17] = 0
	require.Equal(t, want, mem)
	require.True(t, HasSignature(mem, 0))

	// Second run: signed, nothing written or persisted.
	*calls = nil
	res, err = SignatureCheck{Size: HelloStrSize, Persist: persist}.Apply(mem)
	require.NoError(t, err)
	require.Equal(t, SignatureResult{DataOffset: 17}, res)
	require.Empty(t, *calls)
	require.Equal(t, want, mem)
}

// The clients (03, 04, 05, 09, 09scch) with run-all-examples.sh's
// <pmem-offset> 1024: init_hello writes the English hello_t at 1024+17 and
// 1028 bytes are persisted, then the signature at 1024.
func TestSignatureClientFreshOffset(t *testing.T) {
	const off = PMemClientOffset
	mem := make([]byte, off+SignatureLen+HelloTSize)
	persist, calls, data := recorder(&mem)
	res, err := SignatureCheck{Offset: off, Size: HelloTSize, Init: InitHello, Persist: persist}.Apply(mem)
	require.NoError(t, err)
	require.Equal(t, SignatureResult{DataOffset: 1041, Initialized: true}, res)
	require.Equal(t, []persistCall{{1041, 1028}, {1024, 17}}, *calls)
	require.Equal(t, helloImage(0, []byte("Hello world!")), (*data)[0])

	require.Equal(t, make([]byte, off), mem[:off])
	require.Equal(t, sigBytes, mem[off:off+17])
	require.Equal(t, helloImage(0, []byte("Hello world!")), mem[1041:])
	require.False(t, HasSignature(mem, 0))
	require.True(t, HasSignature(mem, off))
}

// With CInitQuirk the hello_t goes where the C code puts it,
// mr_ptr + offset + data_offset = 2*1024 + 17, and init gets size + offset
// bytes; the signature and the data offset are the same.
func TestSignatureClientCInitQuirk(t *testing.T) {
	const off = PMemClientOffset
	mem := make([]byte, 2*off+SignatureLen+HelloTSize)
	persist, calls, _ := recorder(&mem)
	var initLen int
	initFn := func(data []byte) (int, error) {
		initLen = len(data)
		return InitHello(data)
	}
	res, err := SignatureCheck{Offset: off, Size: HelloTSize, Init: initFn, Persist: persist, CInitQuirk: true}.Apply(mem)
	require.NoError(t, err)
	require.Equal(t, SignatureResult{DataOffset: 1041, Initialized: true}, res)
	require.Equal(t, HelloTSize, initLen, "size+offset clipped to the mapping")
	require.Equal(t, []persistCall{{2065, 1028}, {1024, 17}}, *calls)
	require.Equal(t, sigBytes, mem[1024:1041])
	// The client's hello_t (at data_offset) stays uninitialised...
	require.Equal(t, make([]byte, HelloTSize), mem[1041:1041+HelloTSize])
	// ...and the greeting sits at 2*offset + 17.
	s, err := HelloStr(mem[2065:])
	require.NoError(t, err)
	require.Equal(t, "Hello world!", s)

	// With room, init gets the size + offset bytes C passes it.
	big := make([]byte, 3*off+SignatureLen+HelloTSize)
	_, err = SignatureCheck{Offset: off, Size: HelloTSize, Init: initFn, CInitQuirk: true}.Apply(big)
	require.NoError(t, err)
	require.Equal(t, HelloTSize+off, initLen)

	// Offset 0: quirk or not, the same bytes.
	a, b := make([]byte, 2000), make([]byte, 2000)
	_, err = SignatureCheck{Size: HelloTSize, Init: InitHello, CInitQuirk: true}.Apply(a)
	require.NoError(t, err)
	_, err = SignatureCheck{Size: HelloTSize, Init: InitHello}.Apply(b)
	require.NoError(t, err)
	require.Equal(t, a, b)

	// The quirk needs room the C code does not check for.
	short := make([]byte, off+SignatureLen+HelloTSize)
	_, err = SignatureCheck{Offset: off, Size: HelloTSize, Init: InitHello, CInitQuirk: true}.Apply(short)
	require.ErrorIs(t, err, ErrShortBuffer)
	require.Equal(t, make([]byte, len(short)), short)
}

func TestSignatureComparison(t *testing.T) {
	mem := make([]byte, 100)
	copy(mem, "RPMA_EXAMPLE_SIG")
	mem[16] = 'X' // terminator missing: strncmp over 17 bytes differs
	require.False(t, HasSignature(mem, 0))
	mem[16] = 0
	require.True(t, HasSignature(mem, 0))
	copy(mem, "RPMA_EXAMPLE_SIh")
	require.False(t, HasSignature(mem, 0))
	require.False(t, HasSignature(mem[:16], 0))
	require.False(t, HasSignature(mem, -1))
	require.False(t, HasSignature(mem, 90))

	// A half-written signature (crash before its persist completed) means
	// initialise again.
	copy(mem, "RPMA_EXAMP")
	clear(mem[10:])
	res, err := SignatureCheck{Size: 10}.Apply(mem)
	require.NoError(t, err)
	require.True(t, res.Initialized)
}

func TestSignatureErrors(t *testing.T) {
	// Too small: C requires offset + SIGNATURE_LEN + size bytes.
	for _, tc := range []struct{ off, size, memLen int }{
		{0, HelloStrSize, HelloStrSize + SignatureLen - 1},
		{1024, HelloTSize, 1024 + SignatureLen + HelloTSize - 1},
		{0, 1, 0},
		{0, 1, SignatureLen},
	} {
		mem := make([]byte, tc.memLen)
		_, err := SignatureCheck{Offset: tc.off, Size: tc.size, Init: InitHello}.Apply(mem)
		require.ErrorIs(t, err, ErrShortBuffer, "%+v", tc)
		require.Equal(t, make([]byte, tc.memLen), mem)
	}
	_, err := SignatureCheck{Size: 0}.Apply(make([]byte, 100))
	require.ErrorIs(t, err, ErrInvalid)
	_, err = SignatureCheck{Offset: -1, Size: 1}.Apply(make([]byte, 100))
	require.ErrorIs(t, err, ErrInvalid)
	_, err = SignatureCheck{Offset: 1 << 62, Size: 1 << 62}.Apply(make([]byte, 100))
	require.Error(t, err)

	// init failing or misreporting: no signature written.
	mem := make([]byte, 200)
	_, err = SignatureCheck{Size: 100, Init: InitHello}.Apply(mem) // 100 < HELLO_T_SIZE
	require.ErrorIs(t, err, ErrShortBuffer)
	require.False(t, HasSignature(mem, 0))
	_, err = SignatureCheck{Size: 100, Init: func([]byte) (int, error) { return 101, nil }}.Apply(mem)
	require.ErrorIs(t, err, ErrInvalid)
	require.False(t, HasSignature(mem, 0))

	// persist failing: reported, and the signature is not persisted.
	boom := errors.New("boom")
	var calls int
	_, err = SignatureCheck{Size: 10, Persist: func(int, int) error { calls++; return boom }}.Apply(mem)
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, calls)
	require.False(t, HasSignature(mem, 0))
}

func FuzzSignatureCheck(f *testing.F) {
	f.Add(make([]byte, 64), 0, 8, false, false)
	f.Add(append(append([]byte{}, sigBytes...), make([]byte, 40)...), 0, 8, true, false)
	f.Add(make([]byte, 3000), 1024, 1028, true, true)
	f.Fuzz(func(t *testing.T, mem []byte, off, size int, withInit, quirk bool) {
		c := SignatureCheck{Offset: off, Size: size, CInitQuirk: quirk}
		if withInit {
			c.Init = func(d []byte) (int, error) {
				for i := range d {
					d[i] = 0x5a
				}
				return len(d), nil
			}
		}
		before := bytes.Clone(mem)
		res, err := c.Apply(mem)
		if err != nil {
			require.Equal(t, before, mem, "failed Apply must not write")
			return
		}
		require.Equal(t, off+SignatureLen, res.DataOffset)
		require.True(t, HasSignature(mem, off))
		if !res.Initialized {
			require.Equal(t, before, mem)
		}
	})
}
