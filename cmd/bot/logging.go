package main

import (
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"
)

// newLogger builds the process logger from c, writing to w. It is passed to every package that
// logs; nothing here touches zap's globals, so tests can run several bots in one process.
// Messages are event names ({domain}.{action}_{state}); details go in fields.
func newLogger(c Config, w io.Writer) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "time"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	if c.LogFormat == "console" {
		enc.EncodeLevel = zapcore.CapitalLevelEncoder // no colour codes: stderr may be a file
		encoder = zapcore.NewConsoleEncoder(enc)
	} else {
		encoder = zapcore.NewJSONEncoder(enc)
	}
	sink := zapcore.Lock(zapcore.AddSync(w)) // one writer shared by every goroutine
	core := zapcore.NewCore(encoder, sink, c.LogLevel)
	return zap.New(core, zap.ErrorOutput(sink), zap.AddCaller()).With(zap.String("replica", c.ReplicaID))
}

// isTerminal reports whether w is a terminal, where people rather than collectors read the logs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
