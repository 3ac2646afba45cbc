package service

import (
	"context"
	"runtime/debug"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// UnaryInterceptor logs each call (health checks excluded) and turns a
// panic into INTERNAL, so one bad request never takes the process down.
// Recovery is innermost: the log records the resulting code.
func UnaryInterceptor(log *zap.Logger) grpc.UnaryServerInterceptor {
	log = log.Named("rpc")
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		start := time.Now()
		resp, err = recovered(ctx, req, info, handler, log)
		if strings.HasPrefix(info.FullMethod, "/grpc.health.") {
			return resp, err
		}
		code := status.Code(err)
		level := zapcore.DebugLevel
		switch code {
		case codes.OK:
		case codes.Internal, codes.Unknown:
			level = zapcore.ErrorLevel
		default:
			level = zapcore.InfoLevel
		}
		// Check first: a successful call at the default level logs
		// nothing and should allocate nothing for it.
		ce := log.Check(level, "call")
		if ce == nil {
			return resp, err
		}
		fields := []zap.Field{zap.String("method", info.FullMethod), zap.Stringer("code", code), zap.Duration("took", time.Since(start))}
		switch level {
		case zapcore.ErrorLevel:
			fields = append(fields, zap.Error(err))
		case zapcore.InfoLevel:
			fields = append(fields, zap.String("error", status.Convert(err).Message()))
		}
		ce.Write(fields...)
		return resp, err
	}
}

func recovered(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler, log *zap.Logger) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("panic in handler", zap.String("method", info.FullMethod), zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			resp, err = nil, panicStatus()
		}
	}()
	return handler(ctx, req)
}

// StreamRecoverInterceptor turns a panic in a stream handler's goroutine
// into INTERNAL, so one bad host stream never takes the process down.
// (Goroutines a handler starts recover on their own: see recvLoop.)
func StreamRecoverInterceptor(log *zap.Logger) grpc.StreamServerInterceptor {
	log = log.Named("rpc")
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in stream handler", zap.String("method", info.FullMethod), zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
				err = panicStatus()
			}
		}()
		return handler(srv, ss)
	}
}
