package demohost

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolhost"
)

// Tool names.
const (
	TimeNow     = "time_now"
	TimeConvert = "time_convert"
	Calculate   = "calculate"
	TextStats   = "text_stats"
	ReadFile    = "read_file"
	ListFiles   = "list_files"
)

// Register adds the demo tools to h. dir is the directory read_file and
// list_files may read (read-only, confined with os.OpenRoot so that ../
// and symlinks out are refused); "" disables the two file tools. A dir
// that is not a directory is an error.
func Register(h *toolhost.Host, dir string) error {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("demohost: file tools directory %q: %w", dir, err)
		}
		info, err := os.Stat(abs)
		if err != nil {
			return fmt.Errorf("demohost: file tools directory: %w", err)
		}
		if !info.IsDir() {
			return fmt.Errorf("demohost: file tools directory %q is not a directory", dir)
		}
		dir = abs
	}
	handlers := handlers(dir)
	for _, t := range Tools(dir) {
		if err := h.Handle(t, handlers[t.GetName()]); err != nil {
			return fmt.Errorf("demohost: registering %s: %w", t.GetName(), err)
		}
	}
	return nil
}

// handlers returns the handler of each tool, by name.
func handlers(dir string) map[string]toolhost.Handler {
	m := map[string]toolhost.Handler{
		TimeNow:     timeNow,
		TimeConvert: timeConvert,
		Calculate:   calculate,
		TextStats:   textStats,
	}
	if dir != "" {
		m[ReadFile] = readFile(dir)
		m[ListFiles] = listFiles(dir)
	}
	return m
}

// Tools returns the definitions of the demo tools; read_file and
// list_files only when dir is not "". The definitions do not depend on
// what dir is.
func Tools(dir string) []*tooldexv1.Tool {
	tools := []*tooldexv1.Tool{
		{
			Name: TimeNow,
			Description: "Returns the current date and time in a time zone: an RFC 3339 timestamp, the weekday, " +
				"the UTC offset and Unix seconds. Use it whenever you need today's date or the time somewhere.",
			SearchHint: "current time date clock today now timezone weekday",
			InputSchema: schema(map[string]any{
				"zone": map[string]any{
					"type":        "string",
					"description": `IANA time zone name, e.g. "Asia/Tokyo" or "America/New_York". Default "UTC".`,
				},
			}),
			Annotations: annotations("Current time"),
		},
		{
			Name: TimeConvert,
			Description: "Converts a date and time (RFC 3339, with its offset) to another time zone and returns " +
				"it as RFC 3339 with the weekday and UTC offset there.",
			SearchHint: "convert time zone timezone offset meeting schedule local time",
			InputSchema: schema(map[string]any{
				"time": map[string]any{
					"type":        "string",
					"description": `The time to convert, RFC 3339 with an offset, e.g. "2025-03-01T09:30:00+01:00" or "2025-03-01T08:30:00Z".`,
				},
				"to_zone": map[string]any{
					"type":        "string",
					"description": `IANA time zone name to convert to, e.g. "Europe/Paris" or "UTC".`,
				},
			}, "time", "to_zone"),
			Annotations: annotations("Convert time zone"),
		},
		{
			Name: Calculate,
			Description: "Evaluates an arithmetic expression exactly as written and returns its value. Supports " +
				"numbers (decimals, exponents such as 1.5e3), + - * / % ^ (power), unary minus, parentheses, " +
				"the functions sqrt abs round floor ceil min max and the constants pi and e.",
			SearchHint: "calculator math arithmetic compute evaluate expression sum percentage",
			InputSchema: schema(map[string]any{
				"expression": map[string]any{
					"type":        "string",
					"description": `The expression, e.g. "(2 + 3) * 4^2 / sqrt(16)". At most 1,000 characters.`,
					"maxLength":   maxExprLen,
				},
			}, "expression"),
			Annotations: annotations("Calculator"),
		},
		{
			Name: TextStats,
			Description: "Counts the characters, words, lines and sentences of a text and gives its average word " +
				"length and its five most frequent words (common English words such as \"the\" left out).",
			SearchHint: "word count character count text statistics frequency length",
			InputSchema: schema(map[string]any{
				"text": map[string]any{
					"type":        "string",
					"description": "The text to analyse. At most 1,000,000 characters.",
					"maxLength":   maxTextLen,
				},
			}, "text"),
			Annotations: annotations("Text statistics"),
		},
	}
	if dir == "" {
		return tools
	}
	return append(tools,
		&tooldexv1.Tool{
			Name: ReadFile,
			Description: "Reads a text file from the tool host's shared directory and returns its content (the " +
				"first max_bytes bytes), with its size and whether it was truncated. Paths are relative to that " +
				"directory; paths leading out of it are refused, and binary files are not returned.",
			SearchHint: "read file open cat view contents text document",
			InputSchema: schema(map[string]any{
				"path": map[string]any{
					"type":        "string",
					"description": `Path of the file, relative to the shared directory, e.g. "notes/todo.md".`,
				},
				"max_bytes": map[string]any{
					"type":        "integer",
					"description": "Most bytes to return. Default 65536, at most 1048576.",
					"minimum":     1,
					"maximum":     maxReadBytes,
					"default":     defaultReadBytes,
				},
			}, "path"),
			Annotations: annotations("Read file"),
		},
		&tooldexv1.Tool{
			Name: ListFiles,
			Description: "Lists a directory of the tool host's shared directory: each entry's name, size and " +
				"whether it is a directory, sorted by name, at most 500. Paths are relative to the shared " +
				"directory; paths leading out of it are refused.",
			SearchHint: "list files directory folder ls dir browse find glob",
			InputSchema: schema(map[string]any{
				"path": map[string]any{
					"type":        "string",
					"description": `Directory to list, relative to the shared directory. Default "." (the shared directory itself).`,
				},
				"pattern": map[string]any{
					"type":        "string",
					"description": `Optional glob the entry names must match, e.g. "*.md" (Go path/filepath.Match syntax).`,
				},
			}),
			Annotations: annotations("List files"),
		},
	)
}

// schema returns an object schema with props, the required property names
// and no other properties. Its input is static, so a failure is a bug.
func schema(props map[string]any, required ...string) *structpb.Struct {
	m := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		m["required"] = req
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(fmt.Sprintf("demohost: bad schema: %v", err))
	}
	return s
}

func annotations(title string) *tooldexv1.ToolAnnotations {
	return &tooldexv1.ToolAnnotations{Title: title, ReadOnly: true, Idempotent: true}
}

// stringParam returns params[name], def when absent or null.
func stringParam(params map[string]any, name, def string) (string, error) {
	v, ok := params[name]
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string, got %T", name, v)
	}
	return s, nil
}

// intParam returns params[name] as an int in [lo, hi], def when absent or
// null. JSON numbers arrive as float64; they must be whole.
func intParam(params map[string]any, name string, def, lo, hi int) (int, error) {
	v, ok := params[name]
	if !ok || v == nil {
		return def, nil
	}
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	default:
		return 0, fmt.Errorf("%s must be an integer, got %T", name, v)
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%s must be a whole number, got %v", name, f)
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, fmt.Errorf("%s must be between %d and %d, got %v", name, lo, hi, f)
	}
	return int(f), nil
}
