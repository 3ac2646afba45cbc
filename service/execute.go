package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/catalog"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/permission"
	"github.com/tooldex/tooldex/registry"
	"github.com/tooldex/tooldex/schema"
)

// Execute errors, mapped to status codes in status.go.
var (
	// ErrToolNotFound: no tool of that name (NOT_FOUND).
	ErrToolNotFound = errors.New("tool not found")
	// ErrDenied: a permission rule or the host refused (PERMISSION_DENIED).
	ErrDenied = errors.New("permission denied")
)

// maxParamsJSON bounds params_json.
const maxParamsJSON = 4 << 20

// callParams is what travels to the host: the validated parameters, and
// their JSON text when the caller sent text.
type callParams struct {
	structured *structpb.Struct
	json       string
}

// Execute validates, permission-checks and forwards a call to a host.
func (s *Server) Execute(ctx context.Context, req *tooldexv1.ExecuteRequest) (*tooldexv1.ExecuteResponse, error) {
	start := time.Now()
	resp, outcome, hostID, err := s.execute(ctx, req)
	s.metrics.execute(req.GetToolName(), hostID, outcome, time.Since(start))
	return resp, s.toStatus(err)
}

func (s *Server) execute(ctx context.Context, req *tooldexv1.ExecuteRequest) (resp *tooldexv1.ExecuteResponse, outcome, hostID string, err error) {
	e := s.lookup(principalOf(ctx).Tenant, req.GetToolName())
	if e == nil {
		return nil, "not_found", "", fmt.Errorf("%w: %q is not registered; find tools with Search (ToolSearch) first", ErrToolNotFound, req.GetToolName())
	}
	name := e.Name()
	params, instance, err := decodeParams(req)
	if err != nil {
		return nil, "invalid", "", err
	}
	if e.HasSchema() {
		if !fastValid(e.FastChecker(), params, instance) {
			if instance == nil {
				instance = params.structured.AsMap()
			}
			if err := e.Validate(instance); err != nil {
				return nil, "invalid", "", paramViolations(err)
			}
		}
	}
	caller := req.GetCaller()
	switch action, rule := s.perms.Decide(name, caller); action {
	case permission.Deny:
		return nil, "denied", "", fmt.Errorf("%w: %s", ErrDenied, ruleReason(rule, "a permission rule denies "+name))
	case permission.Ask:
		// Only approvals need the canonical parameters: not every call
		// pays for encoding them.
		canon := permission.CanonicalJSON(params.structured.AsMap())
		if req.GetApprovalToken() == "" {
			return &tooldexv1.ExecuteResponse{ToolName: name, ApprovalRequired: &tooldexv1.ApprovalRequest{
				ToolName:      name,
				ParamsSummary: permission.Summary(params.structured.AsMap(), 200),
				ApprovalToken: s.approver.Token(name, caller, canon),
				Rule:          ruleReason(rule, "ask"),
			}}, "approval_required", "", nil
		}
		if err := s.approver.Check(req.GetApprovalToken(), name, caller, canon); err != nil {
			return nil, "denied", "", fmt.Errorf("%w: approval token: %w", ErrDenied, err)
		}
	}
	// The caller's deadline, capped by the server's maximum: the registry
	// enforces it (without deriving a context and its timer per call).
	deadline := time.Now().Add(s.maxExecute)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	res, err := s.reg.Call(ctx, registry.Call{
		Tenant: e.Tenant(), Tool: name, Params: params, Caller: caller, Deadline: deadline,
		Idempotent: e.Idempotent(),
	})
	if err != nil {
		return nil, callOutcome(err), "", err
	}
	if ce := s.log.Check(zap.InfoLevel, "executed"); ce != nil {
		ce.Write(zap.String("tool", name), zap.String("call", res.CallID), zap.String("host", res.HostID),
			zap.String("session", req.GetSessionId()), zap.Int("attempts", res.Attempts))
	}
	r, _ := res.Payload.(*tooldexv1.CallResult)
	if r.GetRefused() != "" {
		return nil, "refused", res.HostID, fmt.Errorf("%w: host %s refused the call: %s", ErrDenied, res.HostID, r.GetRefused())
	}
	outcome = "ok"
	if r.GetIsError() {
		outcome = "tool_error"
	}
	return &tooldexv1.ExecuteResponse{
		ToolName:          name,
		Content:           r.GetContent(),
		IsError:           r.GetIsError(),
		StructuredContent: r.GetStructuredContent(),
		CallId:            res.CallID,
		HostId:            res.HostID,
	}, outcome, res.HostID, nil
}

// lookup finds the tool tenant sees by name, alias or provider-mapped
// name.
func (s *Server) lookup(tenant, name string) *catalog.Entry {
	if e := s.cat.Get(tenant, name); e != nil {
		return e
	}
	if e := s.cat.ByAlias(tenant, name); e != nil {
		return e
	}
	// A name a provider-specific manifest mapped (see GetManifest).
	for _, n := range unmapName(name) {
		if e := s.cat.Get(tenant, n); e != nil {
			return e
		}
	}
	return nil
}

// fastValid reports whether fc (when not nil) vouches for the parameters:
// the decoded instance when there is one, else the Struct in place.
func fastValid(fc *schema.Fast, params *callParams, instance any) bool {
	switch {
	case fc == nil:
		return false
	case instance != nil:
		return fc.Valid(instance)
	}
	return fc.ValidStruct(params.structured)
}

// decodeParams returns the call's parameters for the host, and the value
// to validate: from params_json (numbers kept exact), or nil for params,
// whose Struct the caller converts (AsMap) only when it needs to.
func decodeParams(req *tooldexv1.ExecuteRequest) (*callParams, any, error) {
	if js := req.GetParamsJson(); js != "" {
		if req.GetParams() != nil {
			return nil, nil, badRequest("set params or params_json, not both", []Violation{{Field: "params_json", Description: "params is set too"}})
		}
		if len(js) > maxParamsJSON {
			return nil, nil, badRequest("params_json is too long", []Violation{{Field: "params_json", Description: fmt.Sprintf("is %d bytes, at most %d", len(js), maxParamsJSON)}})
		}
		dec := json.NewDecoder(strings.NewReader(js))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil || dec.More() {
			return nil, nil, badRequest("params_json is not one JSON value", []Violation{{Field: "params_json", Description: fmt.Sprintf("not JSON: %v", err)}})
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, nil, badRequest("params_json must be a JSON object", []Violation{{Field: "params_json", Description: "not an object"}})
		}
		var plain map[string]any
		if err := json.Unmarshal([]byte(js), &plain); err != nil {
			return nil, nil, badRequest("params_json is not valid", []Violation{{Field: "params_json", Description: err.Error()}})
		}
		st, err := structpb.NewStruct(plain)
		if err != nil {
			return nil, nil, badRequest("params_json holds values a Struct cannot", []Violation{{Field: "params_json", Description: err.Error()}})
		}
		return &callParams{structured: st, json: js}, obj, nil
	}
	st := req.GetParams()
	if st == nil {
		st = &structpb.Struct{}
	}
	return &callParams{structured: st}, nil, nil
}

// paramViolations turns a schema validation error into one violation per
// failing leaf, each with its JSON path (params.a.b[0]).
func paramViolations(err error) error {
	var vs []Violation
	var msg bytes.Buffer
	msg.WriteString("params do not match the tool's input schema: ")
	for i, v := range schema.Violations(err) {
		vs = append(vs, Violation{Field: v.Path, Description: v.Description})
		if i > 0 {
			msg.WriteString("; ")
		}
		msg.WriteString(v.Path + ": " + v.Description)
	}
	return badRequest(msg.String(), vs)
}

func ruleReason(r *permission.Rule, fallback string) string {
	if r != nil && r.Reason != "" {
		return r.Reason
	}
	return fallback
}

func callOutcome(err error) string {
	switch {
	case errors.Is(err, registry.ErrNoHost):
		return "no_host"
	case errors.Is(err, registry.ErrOverloaded):
		return "overloaded"
	case errors.Is(err, registry.ErrHostGone):
		return "host_gone"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// ListHosts lists the connected host sessions serving the caller's tenant
// (an admin may name another), and those serving the shared catalog, a
// page at a time.
func (s *Server) ListHosts(ctx context.Context, req *tooldexv1.ListHostsRequest) (*tooldexv1.ListHostsResponse, error) {
	tenant, err := s.readTenant(ctx, req.GetTenant())
	if err != nil {
		return nil, s.toStatus(err)
	}
	size, after, err := pageOf(req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, s.toStatus(err)
	}
	var hosts []registry.HostStatus
	for _, h := range s.reg.Hosts() { // sorted by host id, then session id
		if h.Tenant == tenant || h.Tenant == auth.SharedTenant {
			hosts = append(hosts, h)
		}
	}
	hosts, next := page(hosts, func(h registry.HostStatus) string { return h.HostID + "\x00" + h.SessionID }, after, size)
	resp := &tooldexv1.ListHostsResponse{NextPageToken: next}
	for _, h := range hosts {
		resp.Hosts = append(resp.Hosts, &tooldexv1.HostInfo{
			HostId: h.HostID, SessionId: h.SessionID, Version: h.Version, Tools: h.Tools,
			Slots: int32(h.Slots), InFlight: int32(h.InFlight), Completed: h.Completed,
			Tenant: h.Tenant, Principal: h.Principal,
		})
	}
	return resp, nil
}
