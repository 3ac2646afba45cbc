package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/permission"
	"github.com/tooldex/tooldex/internal/schema"
	"github.com/tooldex/tooldex/registry"
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

// Execute permission-checks, validates and forwards a call to a host, and
// writes one audit record of it.
func (s *Server) Execute(ctx context.Context, req *tooldexv1.ExecuteRequest) (*tooldexv1.ExecuteResponse, error) {
	return s.executeAudited(ctx, req, nil)
}

// executeAudited is Execute; progress, when set, receives the host's
// progress reports (ExecuteStream).
func (s *Server) executeAudited(ctx context.Context, req *tooldexv1.ExecuteRequest, progress func(*tooldexv1.CallProgress)) (*tooldexv1.ExecuteResponse, error) {
	start := time.Now()
	resp, rec, err := s.execute(ctx, req, progress)
	took := time.Since(start)
	s.metrics.execute(req.GetToolName(), rec.host, rec.outcome, took)
	rec.kind, rec.took = "execute", took
	if rec.tool == "" {
		rec.tool = req.GetToolName()
	}
	s.audit(ctx, rec)
	return resp, s.toStatus(err)
}

// execute runs an Execute call, cheapest checks first: the tool exists, the
// subject may run it, a host serves it; only then are the parameters
// decoded and validated against the tool's schema.
func (s *Server) execute(ctx context.Context, req *tooldexv1.ExecuteRequest, progress func(*tooldexv1.CallProgress)) (resp *tooldexv1.ExecuteResponse, rec auditRecord, err error) {
	sub, err := subject(ctx, req.GetCaller())
	if err != nil {
		return nil, auditRecord{outcome: "denied"}, err
	}
	rec.sub = sub
	if err := checkResultView(req.GetResultView()); err != nil {
		return nil, auditRecord{sub: sub, outcome: "invalid"}, err
	}
	e := s.lookup(sub.Tenant, req.GetToolName())
	if e == nil {
		rec.outcome = "not_found"
		return nil, rec, fmt.Errorf("%w: %q is not registered; find tools with Search (ToolSearch) first", ErrToolNotFound, req.GetToolName())
	}
	name := e.Name()
	rec.tool = name
	action, rule := s.perms.DecideFor(name, sub)
	if action == permission.Deny {
		rec.outcome = "denied"
		return nil, rec, fmt.Errorf("%w: %s", ErrDenied, ruleReason(rule, "a permission rule denies "+name))
	}
	ok, local := s.serving(e.Tenant(), name) // remote.go: here, or on another replica
	if !ok {
		rec.outcome = "no_host"
		return nil, rec, fmt.Errorf("%w: %s", registry.ErrNoHost, name)
	}
	params, err := checkParams(ctx, e, req)
	if err != nil {
		rec.outcome = "invalid"
		return nil, rec, err
	}
	if action == permission.Ask {
		// Only approvals need the canonical parameters: not every call
		// pays for encoding them. The token is bound to the subject that
		// asked (tenant, principal, caller).
		canon := permission.CanonicalJSON(params.structured.AsMap())
		bound := approvalSubject(sub)
		if req.GetApprovalToken() == "" {
			rec.outcome = "approval_required"
			return &tooldexv1.ExecuteResponse{ToolName: name, ApprovalRequired: &tooldexv1.ApprovalRequest{
				ToolName:      name,
				ParamsSummary: permission.Summary(params.structured.AsMap(), 200),
				ApprovalToken: s.approver.Token(name, bound, canon),
				Rule:          ruleReason(rule, "ask"),
			}}, rec, nil
		}
		if err := s.approver.Check(req.GetApprovalToken(), name, bound, canon); err != nil {
			rec.outcome = "denied"
			return nil, rec, fmt.Errorf("%w: approval token: %w", ErrDenied, err)
		}
	}
	// The caller's deadline, capped by the server's maximum: the registry
	// enforces it (without deriving a context and its timer per call).
	deadline := time.Now().Add(s.maxExecute)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	res, err := s.callHost(ctx, local, registry.Call{
		Tenant: e.Tenant(), Tool: name, Params: params, Caller: sub.Caller, Deadline: deadline,
		Idempotent: e.Idempotent(), Progress: progressOf(progress),
	})
	if err != nil {
		rec.outcome = registry.Outcome(err)
		return nil, rec, err
	}
	rec.host, rec.call = res.HostID, res.CallID
	r, _ := res.Payload.(*tooldexv1.CallResult)
	if r.GetRefused() != "" {
		rec.outcome = "refused"
		return nil, rec, fmt.Errorf("%w: host %s refused the call: %s", ErrDenied, res.HostID, r.GetRefused())
	}
	rec.outcome = "ok"
	if r.GetIsError() {
		rec.outcome = "tool_error"
	}
	resp = &tooldexv1.ExecuteResponse{
		ToolName:          name,
		Content:           r.GetContent(),
		IsError:           r.GetIsError(),
		StructuredContent: r.GetStructuredContent(),
		CallId:            res.CallID,
		HostId:            res.HostID,
	}
	if req.GetResultView() == tooldexv1.ResultView_RESULT_VIEW_JSON {
		jsonView(resp)
	}
	return resp, rec, nil
}

// checkParams bounds a call's parameters (before decoding them, then what
// a host would receive), decodes them and validates them against the
// tool's input schema, within its work budget.
func checkParams(ctx context.Context, e *catalog.Entry, req *tooldexv1.ExecuteRequest) (*callParams, error) {
	if err := paramsBoundsBefore(req); err != nil {
		return nil, err
	}
	params, instance, err := decodeParams(req)
	if err != nil {
		return nil, err
	}
	if params.json != "" {
		if err := paramsBoundsAfter(params.structured, params.json); err != nil {
			return nil, err
		}
	}
	if e.HasSchema() && !fastValid(e.FastChecker(), params, instance) {
		if instance == nil {
			instance = params.structured.AsMap()
		}
		if err := e.Validate(ctx, instance); err != nil {
			return nil, err
		}
	}
	return params, nil
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

func ruleReason(r *permission.Rule, fallback string) string {
	if r != nil && r.Reason != "" {
		return r.Reason
	}
	return fallback
}

// ListHosts lists the connected host sessions serving the caller's tenant
// (an admin may name another), and those serving the shared catalog, a
// page at a time: with replicas, every replica's (HostInfo.replica names
// the other replicas').
func (s *Server) ListHosts(ctx context.Context, req *tooldexv1.ListHostsRequest) (*tooldexv1.ListHostsResponse, error) {
	tenant, err := s.readTenant(ctx, req.GetTenant())
	if err != nil {
		return nil, s.toStatus(err)
	}
	size, after, err := pageOf(req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, s.toStatus(err)
	}
	hosts, next := page(s.hostsFor(tenant), hostKey, after, size)
	return &tooldexv1.ListHostsResponse{Hosts: hosts, NextPageToken: next}, nil
}
