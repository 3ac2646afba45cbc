package eval

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseGrid(t *testing.T) {
	tests := []struct {
		in      string
		want    Grid
		wantErr string
	}{
		{in: "k1=1.2", want: Grid{{"k1", []float64{1.2}}}},
		{in: " keyword = 0.1, 0.2 ; b=0.75;", want: Grid{{"keyword", []float64{0.1, 0.2}}, {"b", []float64{0.75}}}},
		{in: "b=0.5,0.5,-1", want: Grid{{"b", []float64{0.5, -1}}}},
		{in: "", wantErr: "no axis"},
		{in: "k1", wantErr: "want name=v1"},
		{in: "=1", wantErr: "want name=v1"},
		{in: "k 1=1", wantErr: "want name=v1"},
		{in: "k1=1;k1=2", wantErr: "twice"},
		{in: "k1=x", wantErr: "not a finite number"},
		{in: "k1=NaN", wantErr: "not a finite number"},
		{in: "k1=1,", wantErr: "not a finite number"},
		{in: "a=1,2,3,4,5,6,7,8;b=1,2,3,4,5,6,7,8;c=1,2,3,4,5,6,7,8;d=1,2,3,4,5,6,7,8,9", wantErr: "more than 4096"},
	}
	for _, tt := range tests {
		got, err := ParseGrid(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseGrid(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseGrid(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseGrid(f *testing.F) {
	for _, s := range []string{"k1=1.2", "keyword=0.1,0.2;b=0.75", "a=1;a=2", "x=", ";;", "b=1e308,-1e308"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGrid(s)
		if err != nil {
			return
		}
		n := 1
		for _, a := range g {
			if len(a.Values) == 0 {
				t.Fatalf("ParseGrid(%q): axis %q without values", s, a.Name)
			}
			n *= len(a.Values)
		}
		if n > maxGrid || len(g.Settings()) != n {
			t.Fatalf("ParseGrid(%q): %d settings, product %d", s, len(g.Settings()), n)
		}
	})
}

func TestGridSettings(t *testing.T) {
	g := Grid{{"a", []float64{1, 2}}, {"b", []float64{3, 4, 5}}}
	got := g.Settings()
	var names []string
	for _, s := range got {
		names = append(names, s.String())
	}
	want := []string{"a=1 b=3", "a=1 b=4", "a=1 b=5", "a=2 b=3", "a=2 b=4", "a=2 b=5"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("Settings = %v, want %v", names, want)
	}
}

// tableRanker ranks one query, "q", with the ranking its setting's value
// names: "good" puts the relevant tool first, anything else last.
type tableRanker struct{ first bool }

func (r tableRanker) Rank(string, int) ([]string, error) {
	if r.first {
		return []string{"rel", "x", "y"}, nil
	}
	return []string{"x", "y", "z", "w", "v", "u", "t", "s", "r", "rel"}, nil
}

// Each dataset prefers one value of "v"; the fold for dataset d must pick
// the value the other datasets prefer, not d's own.
func TestCrossValidateLeavesTheDatasetOut(t *testing.T) {
	// best[d] is the value of v that ranks well on dataset d.
	best := []float64{1, 1, 2}
	var sets []Named
	for d := range best {
		sets = append(sets, Named{Name: fmt.Sprintf("d%d", d), Dataset: &Dataset{
			Tools:   []Tool{{Name: fmt.Sprint(d)}},
			Queries: []Query{{ID: "1", Text: "q", Relevant: []string{"rel"}}},
		}})
	}
	grid := Grid{{"v", []float64{1, 2}}}
	build := func(d int, s Setting) (Ranker, error) {
		return tableRanker{first: s[0].Value == best[d]}, nil
	}
	base := []Baseline{{Name: "never", Build: func(int) (Ranker, error) { return tableRanker{}, nil }}}
	cv, err := CrossValidate(sets, grid.Settings(), base, build)
	if err != nil {
		t.Fatal(err)
	}
	low := 1 / math.Log2(11) * 100 // the relevant tool 10th
	for d, f := range cv.Folds {
		if got := cv.Settings[f.Best][0].Value; got != best[d] {
			t.Errorf("fold %d: in-sample best v=%v, want %v", d, got, best[d])
		}
		// Without d2, d0 and d1 prefer v=1; without d0 or d1 the
		// other two tie, and the earlier setting (v=1) wins.
		if got := cv.Settings[f.LODO][0].Value; got != 1 {
			t.Errorf("fold %d: LODO v=%v, want 1", d, got)
		}
		if math.Abs(cv.Base[0][d]-low) > 1e-9 {
			t.Errorf("baseline on d%d = %v, want %v", d, cv.Base[0][d], low)
		}
	}
	if f := cv.Folds[2]; f.BestNDCG != 100 || math.Abs(f.LODONDCG-low) > 1e-9 {
		t.Errorf("fold 2: best %v, LODO %v, want 100, %v", f.BestNDCG, f.LODONDCG, low)
	}
	if cv.Settings[cv.Overall][0].Value != 1 || cv.Chosen[cv.Overall] != 3 {
		t.Errorf("overall v=%v chosen %d, want v=1 by 3 folds", cv.Settings[cv.Overall][0].Value, cv.Chosen[cv.Overall])
	}
	var out bytes.Buffer
	if err := cv.Print(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"never", "in-sample best", "LODO", "without d2: v=1 (in-sample best on it: v=2)", "chosen by 3 of 3 folds"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Print output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCrossValidateErrors(t *testing.T) {
	ds := Named{Name: "a", Dataset: &Dataset{Queries: []Query{{ID: "1", Text: "q", Relevant: []string{"rel"}}}}}
	ok := func(int, Setting) (Ranker, error) { return tableRanker{first: true}, nil }
	if _, err := CrossValidate([]Named{ds}, []Setting{{}}, nil, ok); err == nil {
		t.Error("one dataset: no error")
	}
	if _, err := CrossValidate([]Named{ds, ds}, nil, nil, ok); err == nil {
		t.Error("no setting: no error")
	}
	boom := errors.New("boom")
	_, err := CrossValidate([]Named{ds, ds}, []Setting{{}}, nil, func(int, Setting) (Ranker, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Errorf("failing builder: error %v, want boom", err)
	}
}

func TestPlainBM25(t *testing.T) {
	ds := &Dataset{Tools: []Tool{
		{Name: "get_weather", Original: "getWeather", Description: "Current weather for a city."},
		{Name: "send_mail", Original: "sendMail", Description: "Sends an e-mail message to a recipient."},
		{Name: "stock_price", Original: "stockPrice", Description: "The price of a stock, by ticker."},
	}}
	r := PlainBM25(ds)
	for q, want := range map[string]string{"weather in paris": "get_weather", "send a mail": "send_mail", "ticker price": "stock_price"} {
		got, err := r.Rank(q, 2)
		if err != nil || len(got) == 0 || got[0] != want {
			t.Errorf("Rank(%q) = %v, %v, want %s first", q, got, err, want)
		}
	}
	if got, _ := r.Rank("the of and", 5); len(got) != 0 {
		t.Errorf("stop words only: %v, want nothing", got)
	}
}
