package demohost

import (
	"context"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tooldex/tooldex/toolhost"
)

const (
	// maxTextLen is the longest text text_stats takes, in characters.
	maxTextLen = 1_000_000
	// topWords is how many frequent words text_stats lists.
	topWords = 5
)

// wordCount is one of text_stats' top words.
type wordCount struct {
	Word  string `json:"word"`
	Count int    `json:"count"`
}

// stats is text_stats' answer.
type stats struct {
	Characters        int         `json:"characters"`
	Words             int         `json:"words"`
	Lines             int         `json:"lines"`
	Sentences         int         `json:"sentences"`
	AverageWordLength float64     `json:"average_word_length"`
	TopWords          []wordCount `json:"top_words"`
}

// textStats is the handler of text_stats.
func textStats(_ context.Context, call *toolhost.Call) (*toolhost.Result, error) {
	text, err := stringParam(call.Params, "text", "")
	if err != nil {
		return toolhost.Errorf("%v", err), nil
	}
	if n := utf8.RuneCountInString(text); n > maxTextLen {
		return toolhost.Errorf("the text is %d characters long, more than the %d allowed", n, maxTextLen), nil
	}
	return toolhost.JSON(analyse(text))
}

// analyse computes the statistics of text. Words are runs of letters and
// digits, with apostrophes inside them ("don't") and decimal points or
// thousands separators inside numbers ("3.14", "1,000"); lines are what an editor
// shows (a final newline does not start another); a sentence ends with . !
// or ? followed by a space or the end, and text after the last one counts
// as a sentence too.
func analyse(text string) stats {
	s := stats{Characters: utf8.RuneCountInString(text), TopWords: []wordCount{}}
	if text != "" {
		s.Lines = strings.Count(text, "\n") + 1
		if strings.HasSuffix(text, "\n") {
			s.Lines--
		}
	}
	counts := make(map[string]int)
	letters := 0
	inSentence := false // a word since the last sentence end
	var word strings.Builder
	endWord := func() {
		if word.Len() == 0 {
			return
		}
		w := strings.Trim(word.String(), "'’")
		word.Reset()
		if w == "" {
			return
		}
		s.Words++
		letters += utf8.RuneCountInString(w)
		inSentence = true
		lw := strings.ToLower(w)
		if !isStopWord(lw) {
			counts[lw]++
		}
	}
	for i, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			word.WriteRune(r)
		case (r == '\'' || r == '’') && word.Len() > 0:
			word.WriteRune(r)
		case (r == '.' || r == ',') && endsWithDigit(word.String()) && startsWithDigit(text[i+1:]):
			word.WriteRune(r) // 3.14, 1,000
		default:
			endWord()
			if (r == '.' || r == '!' || r == '?' || r == '…') && inSentence {
				next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
				if i+utf8.RuneLen(r) == len(text) || unicode.IsSpace(next) || next == '"' || next == '”' || next == ')' {
					s.Sentences++
					inSentence = false
				}
			}
		}
	}
	endWord()
	if inSentence {
		s.Sentences++
	}
	if s.Words > 0 {
		s.AverageWordLength = math.Round(float64(letters)/float64(s.Words)*100) / 100
	}
	for w, c := range counts {
		s.TopWords = append(s.TopWords, wordCount{Word: w, Count: c})
	}
	slices.SortFunc(s.TopWords, func(a, b wordCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Word, b.Word)
	})
	if len(s.TopWords) > topWords {
		s.TopWords = s.TopWords[:topWords]
	}
	return s
}

func endsWithDigit(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsDigit(r)
}

func startsWithDigit(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsDigit(r)
}

// isStopWord reports whether w (lower case) is a very common English word.
func isStopWord(w string) bool {
	if utf8.RuneCountInString(w) < 2 {
		return true
	}
	switch w {
	case "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
		"be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "could", "did", "do", "does", "doing", "don't", "down", "during",
		"each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here",
		"hers", "herself", "him", "himself", "his", "how", "if", "in", "into", "is", "it", "it's", "its",
		"itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off",
		"on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
		"same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs",
		"them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
		"under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while",
		"who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves":
		return true
	}
	return false
}
