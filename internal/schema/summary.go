package schema

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
)

// ParamSummary lists a schema's top-level parameters, required first:
// "cron (string, required), prompt (string)". A parameter with no type
// shows its type list joined by "|", "enum" when it only has an enum, or
// "any".
func ParamSummary(s *structpb.Struct) string {
	props := s.GetFields()["properties"].GetStructValue().GetFields()
	if len(props) == 0 {
		return ""
	}
	required := make(map[string]bool)
	for _, v := range s.GetFields()["required"].GetListValue().GetValues() {
		required[v.GetStringValue()] = true
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if required[a] != required[b] {
			if required[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(names))
	for _, n := range names {
		typ := props[n].GetStructValue().GetFields()["type"]
		desc := n
		switch {
		case typ.GetStringValue() != "":
			desc += " (" + typ.GetStringValue()
		case typ.GetListValue() != nil:
			var ts []string
			for _, v := range typ.GetListValue().GetValues() {
				ts = append(ts, v.GetStringValue())
			}
			desc += " (" + strings.Join(ts, "|")
		case props[n].GetStructValue().GetFields()["enum"] != nil:
			desc += " (enum"
		default:
			desc += " (any"
		}
		if required[n] {
			desc += ", required"
		}
		parts = append(parts, desc+")")
	}
	return strings.Join(parts, ", ")
}
