package index

import (
	"hash/maphash"
	"testing"
)

// A query is tried as an exact name only while it has no more ASCII
// letters and digits than the longest spelling indexed (nameIndex.mayName):
// every spelling of the longest name still finds it, and a longer text
// never counts as a name.
func TestExactNameLongestSpelling(t *testing.T) {
	ix := New(Config{})
	for _, name := range []string{"Read", "mcp__serena__find_symbol", "getCurrentWeatherForecastByCityName"} {
		ix.Upsert(Doc{Name: name, Description: "A tool named " + name + "."})
	}
	tests := []struct {
		query, want string // want "" for no exact hit
	}{
		{"getCurrentWeatherForecastByCityName", "getCurrentWeatherForecastByCityName"},
		{"get current weather forecast by city name", "getCurrentWeatherForecastByCityName"},
		{"GET_CURRENT_WEATHER_FORECAST_BY_CITY_NAME", "getCurrentWeatherForecastByCityName"},
		{"  get-current-weather-forecast-by-city-name ", "getCurrentWeatherForecastByCityName"},
		{"find symbol", "mcp__serena__find_symbol"},
		{"read", "Read"},
		{"get current weather forecast by city name now", ""},
		{"getCurrentWeatherForecastByCityNames", ""},
	}
	for _, tt := range tests {
		res, err := ix.Search(tt.query, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(res.Hits) > 0 && res.Hits[0].Match == MatchExact {
			got = res.Hits[0].Name
		}
		if got != tt.want {
			t.Errorf("Search(%q): exact hit %q, want %q", tt.query, got, tt.want)
		}
	}
}

func TestMayName(t *testing.T) {
	n := newNameIndex(maphash.MakeSeed())
	n.add("find symbol", nil)
	tests := []struct {
		text string
		want bool
	}{
		{"find symbol", true},
		{"Find_Symbol!!", true},
		{"findsymbolx", true},   // 11 letters, as many as "find symbol" has bytes
		{"findsymbolxy", false}, // 12
		{"ünïcödé wörds", true}, // only ASCII letters count: 5
	}
	for _, tt := range tests {
		if got := n.mayName(tt.text); got != tt.want {
			t.Errorf("mayName(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
