package eval

// Mix returns sets over one catalog: each set keeps its queries, and its
// tools become those of every set, in order, as a deployment that serves
// all of them at once would hold them. A dataset's floor and gains change
// there: its queries meet tools written in other styles (endpoints beside
// plugins beside functions), which no per-dataset figure shows.
//
// A tool keeps its legal name unless an earlier set's tool has it; it is
// then renamed as Load renames clashes (name_2, ...), after every name
// that clashes with none, and its set's relevant names follow. A relevant
// name that is no tool of its set gets a name no tool has, so that it
// cannot match another set's tool.
func Mix(sets []Named) []Named {
	names := newNamer()
	var tools []Tool
	renamed := make([]map[string]string, len(sets)) // per set: old legal name -> catalog name
	// First every name no earlier tool has, then the clashes, so that a
	// rename never takes a name a later set's tool has itself.
	var clashes [][2]int
	for i, s := range sets {
		renamed[i] = make(map[string]string, len(s.Tools))
		for j, t := range s.Tools {
			if names.used[t.Name] {
				clashes = append(clashes, [2]int{i, len(tools)})
			} else {
				renamed[i][t.Name] = names.claim(t.Name)
			}
			tools = append(tools, s.Tools[j])
		}
	}
	for _, c := range clashes {
		t := &tools[c[1]]
		n := names.claim(t.Name)
		renamed[c[0]][t.Name] = n
		t.Name = n
	}
	out := make([]Named, len(sets))
	for i, s := range sets {
		qs := make([]Query, len(s.Queries))
		for j, q := range s.Queries {
			q.Relevant = append([]string(nil), q.Relevant...)
			for k, r := range q.Relevant {
				n, ok := renamed[i][r]
				if !ok {
					n = names.claim(r)
					renamed[i][r] = n
				}
				q.Relevant[k] = n
			}
			qs[j] = q
		}
		out[i] = Named{Name: s.Name, Dataset: &Dataset{Tools: tools, Queries: qs}}
	}
	return out
}
