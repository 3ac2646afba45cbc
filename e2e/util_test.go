package e2e

import (
	"encoding/json"

	"google.golang.org/protobuf/types/known/structpb"
)

func structFromJSON(s string) (*structpb.Struct, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return structpb.NewStruct(m)
}
