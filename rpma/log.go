package rpma

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// LogLevel mirrors enum rpma_log_level: the severity of a log message, and
// the value of a threshold.
type LogLevel int

const (
	// LogDisabled mirrors RPMA_LOG_DISABLED. As a threshold it lets no
	// message through; it is not a message level.
	LogDisabled LogLevel = -1
	// LogFatal mirrors RPMA_LOG_LEVEL_FATAL: an error that causes the
	// library to stop working properly. It never exits the process.
	LogFatal LogLevel = 0
	// LogError mirrors RPMA_LOG_LEVEL_ERROR: an error that can be handled
	// at a higher level.
	LogError LogLevel = 1
	// LogWarning mirrors RPMA_LOG_LEVEL_WARNING.
	LogWarning LogLevel = 2
	// LogNotice mirrors RPMA_LOG_LEVEL_NOTICE: occasional information,
	// such as a connection being established.
	LogNotice LogLevel = 3
	// LogInfo mirrors RPMA_LOG_LEVEL_INFO: frequent information, such as
	// every operation.
	LogInfo LogLevel = 4
	// LogDebug mirrors RPMA_LOG_LEVEL_DEBUG: debugging output.
	LogDebug LogLevel = 5
)

// String returns the level's name as librpma's enum spells it without
// its RPMA_LOG_LEVEL_ prefix ("FATAL", "ERROR", "WARNING", "NOTICE",
// "INFO", "DEBUG"), "DISABLED" for LogDisabled and "LogLevel(n)" for
// other values. (librpma's own default function prints shorter tags:
// *FATAL*, *ERROR*, *WARN*, *NOTE*, *INFO*, *DEBUG*.)
func (l LogLevel) String() string {
	switch l {
	case LogDisabled:
		return "DISABLED"
	case LogFatal:
		return "FATAL"
	case LogError:
		return "ERROR"
	case LogWarning:
		return "WARNING"
	case LogNotice:
		return "NOTICE"
	case LogInfo:
		return "INFO"
	case LogDebug:
		return "DEBUG"
	default:
		return codeSuffix("LogLevel", int64(l))
	}
}

// valid reports whether l is a valid threshold value.
func (l LogLevel) valid() bool { return l >= LogDisabled && l <= LogDebug }

// zapLevel maps l to a zap level: FATAL and ERROR to Error (FATAL adds the
// field fatal=true and never exits), WARNING to Warn, NOTICE and INFO to
// Info, DEBUG to Debug.
func (l LogLevel) zapLevel() zapcore.Level {
	switch l {
	case LogFatal, LogError:
		return zapcore.ErrorLevel
	case LogWarning:
		return zapcore.WarnLevel
	case LogNotice, LogInfo:
		return zapcore.InfoLevel
	default:
		return zapcore.DebugLevel
	}
}

// LogThreshold mirrors enum rpma_log_threshold: which of the two log
// thresholds to set or get.
type LogThreshold int

const (
	// LogThresholdPrimary mirrors RPMA_LOG_THRESHOLD: messages above this
	// level are not produced at all and never reach the log function.
	// Default [LogWarning].
	LogThresholdPrimary LogThreshold = 0
	// LogThresholdAux mirrors RPMA_LOG_THRESHOLD_AUX: the default log
	// function writes out only messages at or below this level. Custom log
	// functions may use it as they see fit. Default [LogDisabled].
	LogThresholdAux LogThreshold = 1
)

// String returns the C name of t, for example "RPMA_LOG_THRESHOLD_AUX", or
// "LogThreshold(n)" for other values.
func (t LogThreshold) String() string {
	switch t {
	case LogThresholdPrimary:
		return "RPMA_LOG_THRESHOLD"
	case LogThresholdAux:
		return "RPMA_LOG_THRESHOLD_AUX"
	default:
		return codeSuffix("LogThreshold", int64(t))
	}
}

// valid reports whether t names a threshold.
func (t LogThreshold) valid() bool { return t == LogThresholdPrimary || t == LogThresholdAux }

// LogFunc mirrors rpma_log_function: it receives every message at or below
// the primary threshold, already formatted. file and line locate the call,
// fn is the fully qualified name of the calling function (for example
// "github.com/gorpma/rpma/mr.(*MR).Close"). A LogFunc must be safe for
// concurrent use by multiple goroutines.
type LogFunc func(level LogLevel, file string, line int, fn string, msg string)

// Logging state; every field is read and written atomically.
var (
	logThresholds [2]atomic.Int32
	logFunction   atomic.Pointer[LogFunc]    // nil means the default function
	logLogger     atomic.Pointer[zap.Logger] // nil means the default logger
)

func init() {
	logThresholds[LogThresholdPrimary].Store(int32(LogWarning))
	logThresholds[LogThresholdAux].Store(int32(LogDisabled))
}

// SetLogThreshold mirrors rpma_log_set_threshold: it sets threshold t to
// level. It returns an [*OpError] matching [ErrInvalidArgument] if t is not a
// threshold or level is not in [LogDisabled, LogDebug]. It is safe for
// concurrent use.
func SetLogThreshold(t LogThreshold, level LogLevel) error {
	if !t.valid() {
		return inval("log_set_threshold", "invalid threshold %d", int(t))
	}
	if !level.valid() {
		return inval("log_set_threshold", "invalid level %d", int(level))
	}
	logThresholds[t].Store(int32(level))
	return nil
}

// LogThresholdOf mirrors rpma_log_get_threshold: it returns the level of
// threshold t, or an [*OpError] matching [ErrInvalidArgument] if t is not a
// threshold. It is safe for concurrent use.
func LogThresholdOf(t LogThreshold) (LogLevel, error) {
	if !t.valid() {
		return LogDisabled, inval("log_get_threshold", "invalid threshold %d", int(t))
	}
	return LogLevel(logThresholds[t].Load()), nil
}

// SetLogFunction mirrors rpma_log_set_function: it makes f receive every
// message at or below the primary threshold. A nil f restores the default
// function, as RPMA_LOG_USE_DEFAULT_FUNCTION does. It is safe for concurrent
// use; messages being logged at the time may still go to the old function.
func SetLogFunction(f LogFunc) {
	if f == nil {
		logFunction.Store(nil)
		return
	}
	logFunction.Store(&f)
}

// SetLogger replaces the zap logger the default log function writes to. A nil
// l restores the default logger. The default function still passes on only
// messages at or below the auxiliary threshold, so to see messages on l, raise
// both thresholds, for example to [LogNotice]. It is safe for concurrent use.
//
// The default function maps levels as follows: FATAL and ERROR to
// zapcore.ErrorLevel (FATAL adds the field fatal=true and never exits the
// process), WARNING to WarnLevel, NOTICE and INFO to InfoLevel, DEBUG to
// DebugLevel. It sets the entry's caller to the file, line and function that
// called [Logf], so l needs no zap.AddCaller.
func SetLogger(l *zap.Logger) { logLogger.Store(l) }

// defaultLogger is the logger used until SetLogger is called: a console
// encoder on stderr with time, level, logger name ("rpma") and caller, in the
// spirit of librpma's "time *LEVEL* file: line: func: msg" stderr lines.
var defaultLogger = sync.OnceValue(func() *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	core := zapcore.NewCore(enc, zapcore.Lock(stderr{}), zapcore.DebugLevel)
	return zap.New(core).Named("rpma")
})

// stderr writes to whatever os.Stderr is at the time of the write, so that
// redirecting os.Stderr also redirects the default logger.
type stderr struct{}

func (stderr) Write(p []byte) (int, error) { return os.Stderr.Write(p) }
func (stderr) Sync() error                 { return os.Stderr.Sync() }

// defaultLogFunction mirrors rpma_log_default_function: it writes messages at
// or below the auxiliary threshold to the current zap logger. Unlike librpma,
// it does not write to syslog.
func defaultLogFunction(level LogLevel, file string, line int, fn string, msg string) {
	if level > LogLevel(logThresholds[LogThresholdAux].Load()) {
		return
	}
	l := logLogger.Load()
	if l == nil {
		l = defaultLogger()
	}
	ce := l.Check(level.zapLevel(), msg)
	if ce == nil {
		return
	}
	ce.Caller = zapcore.EntryCaller{Defined: file != "", File: file, Line: line, Function: fn}
	if level == LogFatal {
		ce.Write(zap.Bool("fatal", true))
		return
	}
	ce.Write()
}

// LogEnabled reports whether a message at level would be produced, that is
// whether level is a message level at or below the primary threshold. Use it
// to skip building expensive arguments for [Logf].
func LogEnabled(level LogLevel) bool {
	return level >= LogFatal && level <= LogLevel(logThresholds[LogThresholdPrimary].Load())
}

// Logf logs a message at level, formatted as by fmt.Sprintf. It is the
// entry point the other packages of this module use, the counterpart of
// librpma's internal RPMA_LOG_* macros.
//
// A message above the primary threshold costs one atomic load and is
// dropped; so is a message the default function would not write out. The
// caller's file, line and function are captured only for messages that are
// delivered. Logf is safe for concurrent use.
func Logf(level LogLevel, format string, args ...any) {
	if !LogEnabled(level) {
		return
	}
	fp := logFunction.Load()
	if fp == nil && level > LogLevel(logThresholds[LogThresholdAux].Load()) {
		return // the default function would drop it: skip formatting
	}
	var pcs [1]uintptr
	var frame runtime.Frame
	if runtime.Callers(2, pcs[:]) > 0 { // skip runtime.Callers and Logf
		frame, _ = runtime.CallersFrames(pcs[:]).Next()
	}
	msg := fmt.Sprintf(format, args...)
	if fp == nil {
		defaultLogFunction(level, frame.File, frame.Line, frame.Function, msg)
		return
	}
	(*fp)(level, frame.File, frame.Line, frame.Function, msg)
}
