package eval

import (
	"reflect"
	"testing"
)

func TestMix(t *testing.T) {
	a := Named{Name: "a", Dataset: &Dataset{
		Tools:   []Tool{{Name: "get_news", Description: "news of a topic"}, {Name: "weather"}},
		Queries: []Query{{ID: "1", Text: "latest news", Relevant: []string{"get_news"}}},
	}}
	b := Named{Name: "b", Dataset: &Dataset{
		Tools: []Tool{{Name: "get_news", Description: "news by region"}, {Name: "get_news_2"}},
		Queries: []Query{
			{ID: "1", Text: "regional news", Relevant: []string{"get_news", "get_news_2"}},
			// "weather" is no tool of b: it must not find a's.
			{ID: "2", Text: "rain", Relevant: []string{"weather"}},
		},
	}}
	got := Mix([]Named{a, b})
	var names []string
	for _, tl := range got[0].Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"get_news", "weather", "get_news_3", "get_news_2"}; !reflect.DeepEqual(names, want) {
		t.Errorf("catalog = %v, want %v", names, want)
	}
	if &got[0].Tools[0] != &got[1].Tools[0] {
		t.Error("the sets do not share one catalog")
	}
	if d := got[0].Tools[2].Description; d != "news by region" {
		t.Errorf("b's get_news renamed with description %q", d)
	}
	wantRel := [][]string{{"get_news"}, {"get_news_3", "get_news_2"}, {"weather_2"}}
	gotRel := [][]string{got[0].Queries[0].Relevant, got[1].Queries[0].Relevant, got[1].Queries[1].Relevant}
	if !reflect.DeepEqual(gotRel, wantRel) {
		t.Errorf("relevant = %v, want %v", gotRel, wantRel)
	}
	if b.Queries[0].Relevant[0] != "get_news" {
		t.Error("Mix changed its input's queries")
	}
}
