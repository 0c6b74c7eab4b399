//go:build !linux || (!cgo && !rpma_fake)

package ibv

// DeviceNames returns ErrNotSupported in this build.
func DeviceNames() ([]string, error) { return nil, ErrNotSupported }

// Context is an open device; this build cannot open one.
type Context struct{}

// OpenDevice returns ErrNotSupported in this build.
func OpenDevice(string) (*Context, error) { return nil, ErrNotSupported }

// Name returns "".
func (c *Context) Name() string { return "" }

// QueryDevice returns ErrNotSupported in this build.
func (c *Context) QueryDevice() (DeviceAttr, error) { return DeviceAttr{}, ErrNotSupported }

// QueryPort returns ErrNotSupported in this build.
func (c *Context) QueryPort(int) (PortAttr, error) { return PortAttr{}, ErrNotSupported }

// Close does nothing.
func (c *Context) Close() error { return nil }
