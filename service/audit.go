package service

import (
	"context"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/status"

	"github.com/tooldex/tooldex/internal/permission"
	"github.com/tooldex/tooldex/internal/textcut"
)

// auditRecord is one audited action: an Execute, a registration or an
// unregistration. It never holds parameters, results or credentials.
type auditRecord struct {
	kind    string // execute, register, unregister, host_register
	sub     *permission.Subject
	tool    string // the tool, or for a batch the first of them
	tools   int    // a batch's size (0 for one tool)
	host    string
	call    string
	outcome string
	took    time.Duration
}

// maxAuditSubject bounds the caller and principal strings an audit record
// copies (a caller is chosen by a frontend).
const maxAuditSubject = 256

// audit writes rec as one structured log record at info level on the
// "audit" logger, and counts it by kind and outcome. A record without a
// subject (refused before one was known) is written with the context's
// principal.
func (s *Server) audit(ctx context.Context, rec auditRecord) {
	s.metrics.audited(rec.kind, rec.outcome)
	ce := s.auditLog.Check(zap.InfoLevel, rec.kind)
	if ce == nil {
		return
	}
	sub := rec.sub
	if sub == nil {
		p := principalOf(ctx)
		sub = &permission.Subject{Principal: p.Name, Tenant: p.Tenant, Caller: p.Name}
	}
	fields := make([]zap.Field, 0, 10)
	fields = append(fields,
		zap.String("principal", truncate(sub.Principal, maxAuditSubject)),
		zap.String("tenant", sub.Tenant),
	)
	if o := onBehalfOf(sub); o != "" {
		fields = append(fields, zap.String("on_behalf_of", truncate(o, maxAuditSubject)))
	}
	fields = append(fields, zap.String("tool", truncate(rec.tool, maxAuditSubject)))
	if rec.tools > 0 {
		fields = append(fields, zap.Int("tools", rec.tools))
	}
	if rec.host != "" {
		fields = append(fields, zap.String("host", rec.host))
	}
	if rec.call != "" {
		fields = append(fields, zap.String("call", rec.call))
	}
	fields = append(fields, zap.String("outcome", rec.outcome), zap.Duration("took", rec.took))
	ce.Write(fields...)
}

// truncate bounds s to n bytes, at a rune boundary.
func truncate(s string, n int) string {
	t, _ := textcut.Prefix(s, n)
	return t
}

// auditBatch writes the audit record of a registration or unregistration
// request: its first tool's name, the batch's size, and its outcome ("ok",
// or the status code it was refused with). err is a gRPC status.
func auditBatch[T any](ctx context.Context, s *Server, kind string, batch []T, name func(T) string, err error, took time.Duration) {
	rec := auditRecord{kind: kind, tools: len(batch), outcome: "ok", took: took}
	if len(batch) > 0 {
		rec.tool = name(batch[0])
	}
	if err != nil {
		rec.outcome = status.Code(err).String()
	}
	s.audit(ctx, rec)
}
