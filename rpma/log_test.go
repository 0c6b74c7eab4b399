package rpma_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gorpma/rpma/rpma"
)

// The logging state is global: these tests do not run in parallel, and each
// restores the state it changes.

// restoreLogState puts the thresholds, the log function and the logger back
// as they were when the test ends.
func restoreLogState(t *testing.T) {
	t.Helper()
	primary, err := rpma.LogThresholdOf(rpma.LogThresholdPrimary)
	require.NoError(t, err)
	aux, err := rpma.LogThresholdOf(rpma.LogThresholdAux)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, rpma.SetLogThreshold(rpma.LogThresholdPrimary, primary))
		require.NoError(t, rpma.SetLogThreshold(rpma.LogThresholdAux, aux))
		rpma.SetLogFunction(nil)
		rpma.SetLogger(nil)
	})
}

func setThresholds(t *testing.T, primary, aux rpma.LogLevel) {
	t.Helper()
	require.NoError(t, rpma.SetLogThreshold(rpma.LogThresholdPrimary, primary))
	require.NoError(t, rpma.SetLogThreshold(rpma.LogThresholdAux, aux))
}

type logRecord struct {
	level rpma.LogLevel
	file  string
	line  int
	fn    string
	msg   string
}

// logRecorder is a LogFunc that keeps what it receives.
type logRecorder struct {
	mu      sync.Mutex
	records []logRecord
}

func (r *logRecorder) log(level rpma.LogLevel, file string, line int, fn string, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, logRecord{level, file, line, fn, msg})
}

func (r *logRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = nil
}

func (r *logRecorder) get() []logRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]logRecord(nil), r.records...)
}

func (r *logRecorder) levels() []rpma.LogLevel {
	var levels []rpma.LogLevel
	for _, rec := range r.get() {
		levels = append(levels, rec.level)
	}
	return levels
}

var allLevels = []rpma.LogLevel{rpma.LogFatal, rpma.LogError, rpma.LogWarning, rpma.LogNotice, rpma.LogInfo, rpma.LogDebug}

func logAllLevels() {
	for _, l := range allLevels {
		rpma.Logf(l, "message at %v", l)
	}
}

func TestLogLevelStrings(t *testing.T) {
	for _, tt := range []struct {
		level rpma.LogLevel
		value int
		str   string
	}{
		{rpma.LogDisabled, -1, "DISABLED"},
		{rpma.LogFatal, 0, "FATAL"},
		{rpma.LogError, 1, "ERROR"},
		{rpma.LogWarning, 2, "WARNING"},
		{rpma.LogNotice, 3, "NOTICE"},
		{rpma.LogInfo, 4, "INFO"},
		{rpma.LogDebug, 5, "DEBUG"},
	} {
		require.Equal(t, tt.value, int(tt.level), tt.str)
		require.Equal(t, tt.str, tt.level.String())
	}
	require.Equal(t, "LogLevel(6)", rpma.LogLevel(6).String())
	require.Equal(t, "LogLevel(-2)", rpma.LogLevel(-2).String())

	require.Equal(t, 0, int(rpma.LogThresholdPrimary))
	require.Equal(t, 1, int(rpma.LogThresholdAux))
	require.Equal(t, "RPMA_LOG_THRESHOLD", rpma.LogThresholdPrimary.String())
	require.Equal(t, "RPMA_LOG_THRESHOLD_AUX", rpma.LogThresholdAux.String())
	require.Equal(t, "LogThreshold(2)", rpma.LogThreshold(2).String())
}

func TestLogThresholdDefaults(t *testing.T) {
	level, err := rpma.LogThresholdOf(rpma.LogThresholdPrimary)
	require.NoError(t, err)
	require.Equal(t, rpma.LogWarning, level)

	level, err = rpma.LogThresholdOf(rpma.LogThresholdAux)
	require.NoError(t, err)
	require.Equal(t, rpma.LogDisabled, level)
}

func TestSetLogThreshold(t *testing.T) {
	restoreLogState(t)

	for _, th := range []rpma.LogThreshold{rpma.LogThresholdPrimary, rpma.LogThresholdAux} {
		for _, l := range append([]rpma.LogLevel{rpma.LogDisabled}, allLevels...) {
			require.NoError(t, rpma.SetLogThreshold(th, l))
			got, err := rpma.LogThresholdOf(th)
			require.NoError(t, err)
			require.Equal(t, l, got, "%v", th)
		}
	}

	// The two thresholds are independent.
	setThresholds(t, rpma.LogInfo, rpma.LogError)
	got, err := rpma.LogThresholdOf(rpma.LogThresholdPrimary)
	require.NoError(t, err)
	require.Equal(t, rpma.LogInfo, got)
	got, err = rpma.LogThresholdOf(rpma.LogThresholdAux)
	require.NoError(t, err)
	require.Equal(t, rpma.LogError, got)
}

func TestSetLogThresholdInvalid(t *testing.T) {
	restoreLogState(t)
	setThresholds(t, rpma.LogNotice, rpma.LogError)

	for _, tt := range []struct {
		th    rpma.LogThreshold
		level rpma.LogLevel
		msg   string
	}{
		{-1, rpma.LogDebug, "rpma: log_set_threshold: Invalid argument (invalid threshold -1)"},
		{2, rpma.LogDebug, "rpma: log_set_threshold: Invalid argument (invalid threshold 2)"},
		{rpma.LogThresholdPrimary, -2, "rpma: log_set_threshold: Invalid argument (invalid level -2)"},
		{rpma.LogThresholdAux, 6, "rpma: log_set_threshold: Invalid argument (invalid level 6)"},
	} {
		err := rpma.SetLogThreshold(tt.th, tt.level)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		var opErr *rpma.OpError
		require.ErrorAs(t, err, &opErr)
		require.Equal(t, "log_set_threshold", opErr.Op)
		require.EqualError(t, err, tt.msg)
	}

	// Failed calls changed nothing.
	got, err := rpma.LogThresholdOf(rpma.LogThresholdPrimary)
	require.NoError(t, err)
	require.Equal(t, rpma.LogNotice, got)
	got, err = rpma.LogThresholdOf(rpma.LogThresholdAux)
	require.NoError(t, err)
	require.Equal(t, rpma.LogError, got)

	for _, th := range []rpma.LogThreshold{-1, 2, 100} {
		level, err := rpma.LogThresholdOf(th)
		require.ErrorIs(t, err, rpma.ErrInvalidArgument)
		require.EqualError(t, err, fmt.Sprintf("rpma: log_get_threshold: Invalid argument (invalid threshold %d)", th))
		require.Equal(t, rpma.LogDisabled, level)
	}
}

func TestLogFunctionReceivesCaller(t *testing.T) {
	restoreLogState(t)
	setThresholds(t, rpma.LogDebug, rpma.LogDisabled)
	var rec logRecorder
	rpma.SetLogFunction(rec.log)

	_, _, line, _ := runtime.Caller(0)
	rpma.Logf(rpma.LogNotice, "hello %s %d", "world", 42)

	records := rec.get()
	require.Len(t, records, 1)
	r := records[0]
	require.Equal(t, rpma.LogNotice, r.level)
	require.Equal(t, "hello world 42", r.msg)
	require.Equal(t, "log_test.go", filepath.Base(r.file))
	require.True(t, filepath.IsAbs(r.file), r.file)
	require.Equal(t, line+1, r.line)
	require.Equal(t, "github.com/gorpma/rpma/rpma_test.TestLogFunctionReceivesCaller", r.fn)
}

func TestLogFunctionReceivesCallerOfClosure(t *testing.T) {
	restoreLogState(t)
	setThresholds(t, rpma.LogDebug, rpma.LogDisabled)
	var rec logRecorder
	rpma.SetLogFunction(rec.log)

	func() { rpma.Logf(rpma.LogError, "from closure") }()

	records := rec.get()
	require.Len(t, records, 1)
	require.Equal(t, "github.com/gorpma/rpma/rpma_test.TestLogFunctionReceivesCallerOfClosure.func1", records[0].fn)
	require.Equal(t, "from closure", records[0].msg)
}

func TestLogAbovePrimaryThresholdNotDelivered(t *testing.T) {
	restoreLogState(t)
	var rec logRecorder
	rpma.SetLogFunction(rec.log)

	for _, tt := range []struct {
		primary rpma.LogLevel
		want    []rpma.LogLevel
	}{
		{rpma.LogDisabled, nil},
		{rpma.LogFatal, []rpma.LogLevel{rpma.LogFatal}},
		{rpma.LogWarning, []rpma.LogLevel{rpma.LogFatal, rpma.LogError, rpma.LogWarning}},
		{rpma.LogNotice, []rpma.LogLevel{rpma.LogFatal, rpma.LogError, rpma.LogWarning, rpma.LogNotice}},
		{rpma.LogDebug, allLevels},
	} {
		t.Run(tt.primary.String(), func(t *testing.T) {
			rec.reset()
			// The auxiliary threshold does not gate custom functions.
			setThresholds(t, tt.primary, rpma.LogDisabled)
			logAllLevels()
			require.Equal(t, tt.want, rec.levels())
			for _, l := range allLevels {
				require.Equal(t, l <= tt.primary, rpma.LogEnabled(l), "%v", l)
			}
		})
	}
}

func TestLogInvalidLevelsNotDelivered(t *testing.T) {
	restoreLogState(t)
	setThresholds(t, rpma.LogDebug, rpma.LogDebug)
	var rec logRecorder
	rpma.SetLogFunction(rec.log)

	for _, l := range []rpma.LogLevel{rpma.LogDisabled, -2, 6, 100} {
		rpma.Logf(l, "level %d", int(l))
		require.False(t, rpma.LogEnabled(l), "%v", l)
	}
	require.Empty(t, rec.get())
}

func TestLogfDoesNotFormatDroppedMessages(t *testing.T) {
	restoreLogState(t)
	var rec logRecorder
	rpma.SetLogFunction(rec.log)
	var formatted atomic.Int32
	arg := formatCounter{&formatted}

	setThresholds(t, rpma.LogWarning, rpma.LogDisabled)
	rpma.Logf(rpma.LogInfo, "%v", arg)
	require.Zero(t, formatted.Load(), "message above the primary threshold was formatted")

	// With the default function, messages above the auxiliary threshold go
	// nowhere, so they are not formatted either.
	rpma.SetLogFunction(nil)
	rpma.Logf(rpma.LogWarning, "%v", arg)
	require.Zero(t, formatted.Load(), "message dropped by the default function was formatted")

	rpma.SetLogFunction(rec.log)
	rpma.Logf(rpma.LogWarning, "%v", arg)
	require.Equal(t, int32(1), formatted.Load())
	require.Len(t, rec.get(), 1)
	require.Equal(t, "formatted", rec.get()[0].msg)
}

type formatCounter struct{ n *atomic.Int32 }

func (f formatCounter) String() string {
	f.n.Add(1)
	return "formatted"
}

func newObserver() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

func TestDefaultFunctionWritesToLoggerUpToAuxThreshold(t *testing.T) {
	restoreLogState(t)
	logger, logs := newObserver()
	rpma.SetLogger(logger)

	// Default auxiliary threshold: nothing is written.
	setThresholds(t, rpma.LogDebug, rpma.LogDisabled)
	logAllLevels()
	require.Zero(t, logs.Len())

	setThresholds(t, rpma.LogDebug, rpma.LogNotice)
	logAllLevels()

	type entry struct {
		level zapcore.Level
		msg   string
		ctx   map[string]any
	}
	var got []entry
	for _, e := range logs.TakeAll() {
		got = append(got, entry{e.Level, e.Message, e.ContextMap()})

		require.True(t, e.Caller.Defined)
		require.Equal(t, "log_test.go", filepath.Base(e.Caller.File))
		require.Equal(t, "github.com/gorpma/rpma/rpma_test.logAllLevels", e.Caller.Function)
		require.Positive(t, e.Caller.Line)
	}
	require.Equal(t, []entry{
		{zapcore.ErrorLevel, "message at FATAL", map[string]any{"fatal": true}},
		{zapcore.ErrorLevel, "message at ERROR", map[string]any{}},
		{zapcore.WarnLevel, "message at WARNING", map[string]any{}},
		{zapcore.InfoLevel, "message at NOTICE", map[string]any{}},
	}, got)

	// Everything up to DEBUG, with the mapping of the remaining levels.
	setThresholds(t, rpma.LogDebug, rpma.LogDebug)
	logAllLevels()
	var levels []zapcore.Level
	for _, e := range logs.TakeAll() {
		levels = append(levels, e.Level)
	}
	require.Equal(t, []zapcore.Level{
		zapcore.ErrorLevel, zapcore.ErrorLevel, zapcore.WarnLevel,
		zapcore.InfoLevel, zapcore.InfoLevel, zapcore.DebugLevel,
	}, levels)

	// The primary threshold still gates the default function.
	setThresholds(t, rpma.LogError, rpma.LogDebug)
	logAllLevels()
	require.Equal(t, 2, logs.Len())
}

func TestSetLoggerHonoursLoggerLevel(t *testing.T) {
	restoreLogState(t)
	core, logs := observer.New(zapcore.WarnLevel)
	rpma.SetLogger(zap.New(core))
	setThresholds(t, rpma.LogDebug, rpma.LogDebug)

	logAllLevels()
	require.Equal(t, 3, logs.Len(), "zap drops the INFO and DEBUG entries")
}

func TestSetLogFunctionNilRestoresDefault(t *testing.T) {
	restoreLogState(t)
	logger, logs := newObserver()
	rpma.SetLogger(logger)
	setThresholds(t, rpma.LogDebug, rpma.LogDebug)
	var rec logRecorder

	rpma.SetLogFunction(rec.log)
	rpma.Logf(rpma.LogWarning, "to custom")
	require.Len(t, rec.get(), 1)
	require.Zero(t, logs.Len())

	rpma.SetLogFunction(nil)
	rpma.Logf(rpma.LogWarning, "to default")
	require.Len(t, rec.get(), 1, "the custom function is no longer called")
	require.Equal(t, 1, logs.Len())
	require.Equal(t, "to default", logs.All()[0].Message)
}

// captureStderr runs f with os.Stderr redirected to a pipe and returns what
// was written to it.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	var buf bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&buf, r)
		done <- err
	}()

	orig := os.Stderr
	os.Stderr = w
	func() {
		defer func() { os.Stderr = orig }()
		f()
	}()
	require.NoError(t, w.Close())
	require.NoError(t, <-done)
	return buf.String()
}

func TestDefaultLoggerWritesToStderr(t *testing.T) {
	restoreLogState(t)
	logger, logs := newObserver()

	out := captureStderr(t, func() {
		// Release defaults: nothing reaches stderr.
		setThresholds(t, rpma.LogWarning, rpma.LogDisabled)
		rpma.Logf(rpma.LogError, "silent")

		setThresholds(t, rpma.LogWarning, rpma.LogWarning)
		rpma.Logf(rpma.LogWarning, "visible %d", 1)
		rpma.Logf(rpma.LogNotice, "above primary")

		// SetLogger(nil) goes back to stderr.
		rpma.SetLogger(logger)
		rpma.Logf(rpma.LogError, "to observer")
		rpma.SetLogger(nil)
		rpma.Logf(rpma.LogFatal, "visible %d", 2)
	})

	require.Equal(t, 1, logs.Len())
	require.Equal(t, "to observer", logs.All()[0].Message)

	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2, "stderr:\n%s", out)
	// Console encoder: time, level, logger name, caller, message, fields.
	require.Regexp(t, `^\S+\tWARN\trpma\trpma/log_test\.go:\d+\tvisible 1$`, lines[0])
	require.Regexp(t, `^\S+\tERROR\trpma\trpma/log_test\.go:\d+\tvisible 2\t\{"fatal": true\}$`, lines[1])
}

func TestLogfConcurrent(t *testing.T) {
	restoreLogState(t)
	const goroutines, perGoroutine = 32, 200

	var warnings, debugs atomic.Int64
	var bad atomic.Value
	rpma.SetLogFunction(func(level rpma.LogLevel, file string, _ int, fn string, msg string) {
		if filepath.Base(file) != "log_test.go" || !strings.HasPrefix(fn, "github.com/gorpma/rpma/rpma_test.TestLogfConcurrent.") {
			bad.Store(fmt.Sprintf("bad caller %s %s", file, fn))
		}
		switch level {
		case rpma.LogWarning:
			warnings.Add(1)
		case rpma.LogDebug:
			debugs.Add(1)
		default:
			bad.Store(fmt.Sprintf("unexpected level %v", level))
		}
		if !strings.HasPrefix(msg, "goroutine ") {
			bad.Store("bad message " + msg)
		}
	})
	setThresholds(t, rpma.LogDebug, rpma.LogDisabled)

	stop := make(chan struct{})
	var togglers sync.WaitGroup
	togglers.Add(1)
	go func() {
		defer togglers.Done()
		logger, _ := newObserver()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// WARNING stays at or below the primary threshold throughout.
			primary := rpma.LogWarning
			if i%2 == 0 {
				primary = rpma.LogDebug
			}
			if err := rpma.SetLogThreshold(rpma.LogThresholdPrimary, primary); err != nil {
				bad.Store(err.Error())
			}
			if err := rpma.SetLogThreshold(rpma.LogThresholdAux, allLevels[i%len(allLevels)]); err != nil {
				bad.Store(err.Error())
			}
			if _, err := rpma.LogThresholdOf(rpma.LogThresholdPrimary); err != nil {
				bad.Store(err.Error())
			}
			if i%2 == 0 {
				rpma.SetLogger(logger)
			} else {
				rpma.SetLogger(nil)
			}
		}
	}()

	var loggers sync.WaitGroup
	for g := range goroutines {
		loggers.Add(1)
		go func() {
			defer loggers.Done()
			for i := range perGoroutine {
				rpma.Logf(rpma.LogWarning, "goroutine %d message %d", g, i)
				rpma.Logf(rpma.LogDebug, "goroutine %d debug %d", g, i)
			}
		}()
	}
	loggers.Wait()
	close(stop)
	togglers.Wait()

	require.Nil(t, bad.Load())
	require.Equal(t, int64(goroutines*perGoroutine), warnings.Load())
	require.LessOrEqual(t, debugs.Load(), int64(goroutines*perGoroutine))
}

func TestDefaultFunctionConcurrent(t *testing.T) {
	restoreLogState(t)
	const goroutines, perGoroutine = 16, 100
	logger, logs := newObserver()
	rpma.SetLogger(logger)
	setThresholds(t, rpma.LogDebug, rpma.LogInfo)

	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perGoroutine {
				rpma.Logf(rpma.LogInfo, "goroutine %d message %d", g, i)
				rpma.Logf(rpma.LogDebug, "dropped by aux")
			}
		}()
	}
	wg.Wait()

	entries := logs.All()
	require.Len(t, entries, goroutines*perGoroutine)
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		require.Equal(t, zapcore.InfoLevel, e.Level)
		seen[e.Message] = true
	}
	require.Len(t, seen, goroutines*perGoroutine, "every message arrives once")
}
