package ibv

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDeviceAttrCapabilities(t *testing.T) {
	// rxe on Linux 6.12 reports 0x1C001223C76: bits 38, 39 and 40 set.
	a := DeviceAttr{CapFlagsEx: 0x1C001223C76}
	require.True(t, a.NativeAtomicWrite())
	require.True(t, a.NativeFlush())
	require.False(t, a.ODP())
	// rxe on Linux 6.1: 0x1223C76, none of them.
	a = DeviceAttr{CapFlagsEx: 0x1223C76}
	require.False(t, a.NativeAtomicWrite())
	require.False(t, a.NativeFlush())
	// One flush bit alone is not flush capability.
	a = DeviceAttr{CapFlagsEx: DeviceFlushGlobal}
	require.False(t, a.NativeFlush())

	a = DeviceAttr{ODPGeneralCaps: ODPSupport, ODPRCCaps: ODPSupportRead | ODPSupportWrite}
	require.True(t, a.ODP())
	a.ODPRCCaps = ODPSupportRead
	require.False(t, a.ODP())
}

func TestPortStateString(t *testing.T) {
	require.Equal(t, "ACTIVE", PortActive.String())
	require.Equal(t, "DOWN", PortDown.String())
	require.Equal(t, "UNKNOWN", PortState(42).String())
}
