package toolhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// Call is one ExecuteCall as a Handler sees it.
type Call struct {
	// ID is the call id the server gave this attempt.
	ID string
	// Tool is the name of the tool called.
	Tool string
	// Caller is the caller's identity, when it gave one.
	Caller string
	// Params are the call's parameters, validated by the server against the
	// tool's input schema. Numbers are float64, as in encoding/json.
	Params map[string]any
	// ParamsJSON is the parameters as JSON text when the server sent them
	// so (ExecuteCall.params_json), for handlers that need 64-bit integers
	// exactly; "" otherwise. Params then holds the same values decoded.
	ParamsJSON string
	// Attempt is 1 for the first attempt and more when the server retries
	// an idempotent call.
	Attempt int
	// WantProgress says the caller asked for progress (ExecuteStream):
	// Progress reports reach it. Without it they are dropped by the server.
	WantProgress bool

	progress func(progress, total float64, message string)
}

// Progress reports the call's progress to the server. It is best effort:
// a report may be dropped when the connection is backed up or gone, and it
// does nothing on a Call not made by a Host (in tests, say).
func (c *Call) Progress(progress, total float64, message string) {
	if c == nil || c.progress == nil {
		return
	}
	c.progress(progress, total, message)
}

// Result is what a Handler returns.
type Result struct {
	// Content is the result, as MCP has it.
	Content []*tooldexv1.Content
	// IsError says the tool ran and failed; Content explains.
	IsError bool
	// Structured is the structured result, when the tool has one. Its values
	// must be JSON-encodable.
	Structured map[string]any
}

// Text returns a result of one text block.
func Text(s string) *Result {
	return &Result{Content: []*tooldexv1.Content{textContent(s)}}
}

// JSON returns a result of one JSON block holding v as encoding/json
// encodes it. When v encodes to a JSON object, the result's Structured is
// that object too.
func JSON(v any) (*Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("toolhost: encoding result: %w", err)
	}
	var decoded any
	if err := json.Unmarshal(b, &decoded); err != nil {
		return nil, fmt.Errorf("toolhost: decoding result: %w", err)
	}
	val, err := structpb.NewValue(decoded)
	if err != nil {
		return nil, fmt.Errorf("toolhost: converting result: %w", err)
	}
	res := &Result{Content: []*tooldexv1.Content{{Kind: &tooldexv1.Content_Json{Json: val}}}}
	if obj, ok := decoded.(map[string]any); ok {
		res.Structured = obj
	}
	return res, nil
}

// Errorf returns an error result (IsError set) whose one text block is the
// formatted message. The model sees it.
func Errorf(format string, args ...any) *Result {
	return &Result{Content: []*tooldexv1.Content{textContent(fmt.Sprintf(format, args...))}, IsError: true}
}

// Handler runs one call of a tool. See the package documentation for how
// its result, error or panic reach the caller.
type Handler func(ctx context.Context, call *Call) (*Result, error)

// callParams returns the parameters of ex: params_json decoded when it is
// set (the server prefers it), the params Struct otherwise.
func callParams(ex *tooldexv1.ExecuteCall) (map[string]any, error) {
	js := ex.GetParamsJson()
	if js == "" {
		return ex.GetParams().AsMap(), nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		return ex.GetParams().AsMap(), fmt.Errorf("toolhost: params_json: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// refusal is the error Refuse makes.
type refusal struct{ reason string }

func (r *refusal) Error() string { return "call refused: " + r.reason }

// Refuse returns an error that, returned by a Handler (possibly wrapped),
// refuses the call: the server gets a CallResult with refused set to reason
// and its caller gets PERMISSION_DENIED. Use it for the host's own
// permission checks, not for a tool that ran and failed (use Errorf).
func Refuse(reason string) error {
	if reason == "" {
		reason = "refused by the tool host"
	}
	return &refusal{reason: reason}
}

// IsRefusal reports whether err is or wraps an error made by Refuse, and
// with what reason.
func IsRefusal(err error) (reason string, ok bool) {
	var r *refusal
	if errors.As(err, &r) {
		return r.reason, true
	}
	return "", false
}

func textContent(s string) *tooldexv1.Content {
	return &tooldexv1.Content{Kind: &tooldexv1.Content_Text{Text: s}}
}

// callResult turns what a handler gave into the CallResult for call id.
func callResult(id string, res *Result, err error) *tooldexv1.CallResult {
	out := &tooldexv1.CallResult{CallId: id}
	if reason, ok := IsRefusal(err); ok {
		out.Refused = reason
		return out
	}
	if err != nil {
		out.IsError = true
		out.Content = []*tooldexv1.Content{textContent(err.Error())}
		return out
	}
	if res == nil {
		return out
	}
	out.IsError = res.IsError
	for _, c := range res.Content {
		if c != nil {
			out.Content = append(out.Content, c)
		}
	}
	if res.Structured != nil {
		s, err := toStruct(res.Structured)
		if err != nil {
			return &tooldexv1.CallResult{
				CallId:  id,
				IsError: true,
				Content: []*tooldexv1.Content{textContent(fmt.Sprintf("the tool's structured result cannot be encoded: %v", err))},
			}
		}
		out.StructuredContent = s
	}
	return out
}

// errorResult is an is_error CallResult with one text block.
func errorResult(id, format string, args ...any) *tooldexv1.CallResult {
	return &tooldexv1.CallResult{
		CallId:  id,
		IsError: true,
		Content: []*tooldexv1.Content{textContent(fmt.Sprintf(format, args...))},
	}
}

// toStruct converts m to a Struct, going through encoding/json when m holds
// values structpb does not take directly ([]string, structs, ...).
func toStruct(m map[string]any) (*structpb.Struct, error) {
	if s, err := structpb.NewStruct(m); err == nil {
		return s, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(b, &decoded); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	s, err := structpb.NewStruct(decoded)
	if err != nil {
		return nil, fmt.Errorf("converting: %w", err)
	}
	return s, nil
}
