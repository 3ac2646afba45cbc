package devcli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tooldex/tooldex/index/analysis"
	"github.com/tooldex/tooldex/internal/eval"
)

// Defaults of request-words, those index/analysis/requestwords.tsv was
// made with.
const (
	defaultRequestKappa    = 0.1
	defaultRequestMinShare = 0.0005
)

// cmdRequestWords computes the request share of each term over the
// datasets' queries and tools (eval.RequestShares) and writes the table
// that index/analysis embeds.
func cmdRequestWords(e env, args []string) error {
	fs := newFlags("request-words", e)
	datasets := fs.String("datasets", "", "dataset folders, comma-separated (a folder of dataset folders counts as each of them); only those whose licences allow deriving a shipped table")
	kappa := fs.Float64("kappa", defaultRequestKappa, "how much a term's share of tool texts offsets its share of queries")
	minShare := fs.Float64("min-share", defaultRequestMinShare, "smallest share written")
	out := fs.String("o", "", "output file (default: standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kappa < 0 || *minShare <= 0 || *minShare >= 1 {
		return fmt.Errorf("request-words: want --kappa ≥ 0 and --min-share in (0, 1)")
	}
	dirs, err := datasetDirs(*datasets)
	if err != nil {
		return fmt.Errorf("request-words: %w", err)
	}
	sets, err := eval.LoadDirs(dirs)
	if err != nil {
		return fmt.Errorf("request-words: %w", err)
	}
	shares := eval.RequestShares(analysis.New(), sets, *kappa, *minShare)
	header := []string{
		"Request shares by term (index/analysis/requestwords.go), made by",
		"tooldex-dev request-words --kappa " + strconv.FormatFloat(*kappa, 'g', -1, 64) +
			" --min-share " + strconv.FormatFloat(*minShare, 'g', -1, 64) + " over these datasets' queries and tools:",
	}
	for _, s := range sets {
		header = append(header, fmt.Sprintf("  %s (%d queries, %d tools)", s.Name, len(s.Dataset.Queries), len(s.Dataset.Tools)))
	}
	if *out == "" {
		return eval.WriteRequestShares(e.stdout, shares, header)
	}
	f, err := os.Create(filepath.Clean(*out))
	if err != nil {
		return fmt.Errorf("request-words: %w", err)
	}
	if err := eval.WriteRequestShares(f, shares, header); err != nil {
		f.Close()
		return fmt.Errorf("request-words: %w", err)
	}
	return f.Close()
}

// readRequestShares reads a request-word table from a file.
func readRequestShares(path string) (map[string]float64, error) {
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return analysis.ParseRequestShares(f)
}
