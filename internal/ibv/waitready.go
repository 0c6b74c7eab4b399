package ibv

// WaitReady says which fds ended a CompChannel.WaitCQEventRearm.
type WaitReady uint8

// The fds of a WaitReady.
const (
	ReadyChannel WaitReady = 1 << iota // the completion channel
	ReadyCancel                        // the cancellation fd
	ReadyOther                         // another fd of the epoll instance
)
