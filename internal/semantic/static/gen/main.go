// Command gen distils the static model (package static) from Universal
// Sentence Encoder lite (package uselite) by the Model2Vec method and
// writes internal/semantic/static/model.bin:
//
//	apt-cache dumpavail > packages.txt    # Debian's package descriptions: the word list
//	go run ./internal/semantic/static/gen -corpus packages.txt -out internal/semantic/static/model.bin
//
// Every SentencePiece piece (alone) and every frequent corpus word that is
// not a single piece go through the teacher; the vectors are centred and
// reduced by PCA to -dim dimensions, then weighted by SIF, a/(a+p), with
// p a piece's unigram probability (its vocabulary score) or a word's
// corpus frequency. The corpus is read for its "Description:" lines (any
// other text file works with -all-lines).
package main

import (
	"bufio"
	"flag"

	"log"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/tooldex/tooldex/internal/semantic/static"
	"github.com/tooldex/tooldex/internal/semantic/uselite"
)

func main() {
	corpus := flag.String("corpus", "", "word-list corpus (apt-cache dumpavail output)")
	allLines := flag.Bool("all-lines", false, "read every line of the corpus, not only Description: lines")
	out := flag.String("out", "internal/semantic/static/model.bin", "model file to write")
	dim := flag.Int("dim", 256, "dimensions after PCA")
	nWords := flag.Int("words", 16000, "most frequent corpus words to add (those not a single piece)")
	minCount := flag.Int("min-count", 3, "fewest occurrences of an added word")
	sif := flag.Float64("sif", 1e-5, "SIF coefficient a in a/(a+p) (chosen by leave-one-dataset-out among 1e-3, 1e-4, 1e-5)")
	flag.Parse()
	if err := run(*corpus, *allLines, *out, *dim, *nWords, *minCount, *sif); err != nil {
		log.Fatal(err)
	}
}

func run(corpus string, allLines bool, out string, dim, nWords, minCount int, sif float64) error {
	teacher, err := uselite.Load()
	if err != nil {
		return err
	}
	tok := teacher.Tokenizer()
	counts := map[string]int{}
	total := 0
	if corpus != "" {
		f, err := os.Open(corpus)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !allLines {
				d, ok := strings.CutPrefix(line, "Description:")
				if !ok {
					continue
				}
				line = d
			}
			static.Words(line, func(w string) { counts[w]++; total++ })
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return err
		}
	}
	type wc struct {
		w string
		n int
	}
	var ranked []wc
	for w, n := range counts {
		if n >= minCount && len(w) >= 2 && len(w) <= 255 {
			ranked = append(ranked, wc{w, n})
		}
	}
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].n != ranked[j].n {
			return ranked[i].n > ranked[j].n
		}
		return ranked[i].w < ranked[j].w
	})
	var words []string
	var wordP []float64
	for _, r := range ranked {
		if len(words) == nWords {
			break
		}
		if len(tok.Encode(nil, r.w)) == 1 {
			continue // the piece's own vector is the word's
		}
		words = append(words, r.w)
		wordP = append(wordP, float64(r.n)/float64(total))
	}
	pieces := tok.Size()
	n := pieces + len(words)
	log.Printf("%d corpus words (%d distinct); %d pieces and %d words through the teacher", total, len(counts), pieces, len(words))
	start := time.Now()
	X := make([][]float64, n)
	prob := make([]float64, n)
	v := make([]float32, uselite.Dim)
	for i := range n {
		if i < pieces {
			teacher.VectorIDs(v, []int32{int32(i)})
			prob[i] = math.Exp(tok.Score(i))
		} else {
			teacher.VectorTo(v, words[i-pieces])
			prob[i] = wordP[i-pieces]
		}
		X[i] = make([]float64, len(v))
		for j, x := range v {
			X[i][j] = float64(x)
		}
		if i%5000 == 0 {
			log.Printf("%d/%d (%v)", i, n, time.Since(start).Round(time.Second))
		}
	}
	// The reserved ids (unknown, <s>, ...) carry no meaning: zero rows,
	// kept out of the fit.
	const reserved = 6
	fit := X[reserved:]
	d := len(X[0])
	mean := make([]float64, d)
	for _, x := range fit {
		for j := range x {
			mean[j] += x[j]
		}
	}
	for j := range mean {
		mean[j] /= float64(len(fit))
	}
	cov := make([][]float64, d)
	for i := range cov {
		cov[i] = make([]float64, d)
	}
	c := make([]float64, d)
	for _, x := range fit {
		for j := range x {
			c[j] = x[j] - mean[j]
		}
		for a := range d {
			ca, row := c[a], cov[a]
			for b := a; b < d; b++ {
				row[b] += ca * c[b]
			}
		}
	}
	for a := range d {
		for b := a; b < d; b++ {
			cov[a][b] /= float64(len(fit))
			cov[b][a] = cov[a][b]
		}
	}
	vals, vecs := jacobi(cov)
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return vals[order[i]] > vals[order[j]] })
	var kept, all float64
	for i, o := range order {
		all += vals[o]
		if i < dim {
			kept += vals[o]
		}
	}
	log.Printf("PCA: %d of %d dimensions keep %.1f%% of the variance", dim, d, 100*kept/all)
	outVecs := make([][]float32, n)
	for i := range n {
		outVecs[i] = make([]float32, dim)
		if i < reserved {
			continue
		}
		w := sif / (sif + prob[i])
		for k := range dim {
			col := order[k]
			var s float64
			for j := range d {
				s += (X[i][j] - mean[j]) * vecs[j][col]
			}
			outVecs[i][k] = float32(s * w)
		}
	}
	b, err := static.Encode(dim, pieces, words, outVecs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s: %d bytes in %v", out, len(b), time.Since(start).Round(time.Second))
	return nil
}

// jacobi returns the eigenvalues and eigenvectors (columns of vecs) of the
// symmetric matrix a (overwritten), by cyclic Jacobi rotations.
func jacobi(a [][]float64) (vals []float64, vecs [][]float64) {
	n := len(a)
	vecs = make([][]float64, n)
	for i := range vecs {
		vecs[i] = make([]float64, n)
		vecs[i][i] = 1
	}
	for sweep := 0; sweep < 50; sweep++ {
		var off float64
		for p := range n {
			for q := p + 1; q < n; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off < 1e-22 {
			break
		}
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				if math.Abs(a[p][q]) < 1e-300 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				cs := 1 / math.Sqrt(t*t+1)
				sn := t * cs
				for k := range n {
					akp, akq := a[k][p], a[k][q]
					a[k][p] = cs*akp - sn*akq
					a[k][q] = sn*akp + cs*akq
				}
				for k := range n {
					apk, aqk := a[p][k], a[q][k]
					a[p][k] = cs*apk - sn*aqk
					a[q][k] = sn*apk + cs*aqk
				}
				for k := range n {
					vkp, vkq := vecs[k][p], vecs[k][q]
					vecs[k][p] = cs*vkp - sn*vkq
					vecs[k][q] = sn*vkp + cs*vkq
				}
			}
		}
	}
	vals = make([]float64, n)
	for i := range n {
		vals[i] = a[i][i]
	}
	return vals, vecs
}
