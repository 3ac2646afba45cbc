package main

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/origin"
)

// The web listener's bounds (docs/LIMITS.md).
const (
	// webHeaderTimeout is how long a client may take to send a request's
	// headers; webBodyTimeout its body (a request whose body is still
	// arriving then fails).
	webHeaderTimeout = 5 * time.Second
	webBodyTimeout   = 30 * time.Second
	// webIdleTimeout closes a keep-alive connection with no request.
	webIdleTimeout = 2 * time.Minute
	// webMaxHeaderBytes bounds a request's headers (HTTP/1.1 and HTTP/2).
	webMaxHeaderBytes = 64 << 10
	// webMaxStreams is the HTTP/2 streams a connection may have open.
	webMaxStreams = 100
	// webFraming is what a request body may hold beyond one message: the
	// 5-byte envelope of the streaming protocols, with room to spare.
	webFraming = 1 << 10
	// webCORSMaxAge is how long a browser may cache a preflight's answer.
	webCORSMaxAge = 2 * time.Hour
)

// webConfig is the --web-addr listener's configuration.
type webConfig struct {
	addr    string
	origins []string // normalised (lower case, no trailing slash)
}

// webFlags adds --web-addr and --web-allowed-origins to fs; the returned
// function checks and stores the origins after parsing.
func webFlags(fs *flag.FlagSet, c *webConfig) func() error {
	fs.StringVar(&c.addr, "web-addr", "", "also serve Connect, gRPC-Web and gRPC (HTTP/1.1 and HTTP/2, h2c without --tls-cert) on this second address, through the same interceptors; the --addr port stays native gRPC (empty: off)")
	origins := fs.String("web-allowed-origins", "", "comma-separated browser origins (scheme://host[:port]) answered with CORS headers on --web-addr; a request from any other origin is refused (empty: none)")
	return func() error {
		var err error
		c.origins, err = origin.ParseList(*origins)
		if err != nil {
			return fmt.Errorf("--web-allowed-origins: %w", err)
		}
		if len(c.origins) > 0 && c.addr == "" {
			return errors.New("--web-allowed-origins needs --web-addr")
		}
		return nil
	}
}

// webServer is the --web-addr listener: gs's services but HostService,
// transcoded by vanguard from Connect, gRPC-Web and gRPC into gRPC and
// served by gs.ServeHTTP, so every interceptor of gs applies.
type webServer struct {
	srv  *http.Server
	lis  net.Listener
	done chan error
}

// startWeb listens on c.web.addr and serves it until stopWeb. The address
// follows the gRPC listener's authentication rule (auth.ServerFlags): with
// no credential source, only a loopback address or --insecure-anonymous.
func startWeb(c *config, gs *grpc.Server, tlsConf *tls.Config, log *zap.Logger) (*webServer, error) {
	h, err := webHandler(gs, c.maxMsgBytes, c.web.origins)
	if err != nil {
		return nil, fmt.Errorf("--web-addr: %w", err)
	}
	lis, err := net.Listen("tcp", c.web.addr)
	if err != nil {
		return nil, fmt.Errorf("web listen: %w", err)
	}
	// The calls are authenticated by gs's interceptors; only the rule for
	// this address applies here.
	if warn, err := c.auth.CheckAddr(lis.Addr()); err != nil {
		lis.Close()
		return nil, fmt.Errorf("--web-addr: %w", err)
	} else if warn != "" {
		log.Warn(warn)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	if tlsConf != nil {
		protocols.SetHTTP2(true)
	} else {
		protocols.SetUnencryptedHTTP2(true)
	}
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         tlsConf,
		Protocols:         &protocols,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: webMaxStreams},
		ReadHeaderTimeout: webHeaderTimeout,
		IdleTimeout:       webIdleTimeout,
		MaxHeaderBytes:    webMaxHeaderBytes,
		ErrorLog:          zap.NewStdLog(log.Named("web")),
	}
	w := &webServer{srv: srv, lis: lis, done: make(chan error, 1)}
	go func() { w.done <- serveHTTP(srv, lis) }()
	log.Info("web", zap.String("addr", lis.Addr().String()), zap.String("protocols", "connect, grpc-web, grpc"), zap.Strings("allowed_origins", c.web.origins))
	return w, nil
}

// stop lets in-flight calls finish within grace, then closes what is left,
// and returns once the server's goroutine is done. A nil w does nothing.
func (w *webServer) stop(grace time.Duration) {
	if w == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := w.srv.Shutdown(ctx); err != nil {
		w.srv.Close()
	}
	<-w.done
}

// webHandler is the web listener's handler: CORS and origin check, the
// request body's bounds, then vanguard over gs.
func webHandler(gs *grpc.Server, maxMsg int, origins []string) (http.Handler, error) {
	names := make([]string, 0, 8)
	methods := map[string]bool{} // the paths of the methods served
	for name, info := range gs.GetServiceInfo() {
		if name != tooldexv1.HostService_ServiceDesc.ServiceName {
			names = append(names, name)
			for _, m := range info.Methods {
				methods["/"+name+"/"+m.Name] = true
			}
		}
	}
	slices.Sort(names)
	services := make([]*vanguard.Service, len(names))
	for i, name := range names {
		services[i] = vanguard.NewService(name, gs)
	}
	limit := uint32(maxMsg)
	t, err := vanguard.NewTranscoder(services,
		vanguard.WithDefaultServiceOptions(
			vanguard.WithTargetProtocols(vanguard.ProtocolGRPC),
			// gs forces its own proto codec and has no gzip: vanguard
			// decodes JSON and decompresses before gs sees a message.
			vanguard.WithTargetCodecs(vanguard.CodecProto),
			vanguard.WithNoTargetCompression(),
			vanguard.WithMaxMessageBufferBytes(limit),
		),
		vanguard.WithCodec(func(res vanguard.TypeResolver) vanguard.Codec { return jsonCodec{vanguard.NewJSONCodec(res)} }),
		vanguard.WithCompression(vanguard.CompressionGzip,
			func() connect.Compressor { return gzip.NewWriter(io.Discard) },
			func() connect.Decompressor { return &boundedGzip{max: int64(maxMsg)} }),
		vanguard.WithUnknownHandler(unknownHandler(methods)),
	)
	if err != nil {
		return nil, err
	}
	return withCORS(boundBody(t, int64(maxMsg)+webFraming), origins), nil
}

// unknownHandler answers what vanguard does not route: a method served
// but asked without the Connect-Protocol-Version header (vanguard takes such
// a request for REST, which is not served) with invalid_argument saying so;
// HostService with a clear unimplemented (host streams belong on the gRPC
// port, whose transport pings them); anything else unimplemented as for an
// unknown method, or 404 when the request is no RPC.
func unknownHandler(methods map[string]bool) http.Handler {
	ew := connect.NewErrorWriter()
	hostPrefix := "/" + tooldexv1.HostService_ServiceDesc.ServiceName + "/"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ew.IsSupported(r) {
			http.NotFound(w, r)
			return
		}
		msg := "unknown service or method " + r.URL.Path
		if methods[r.URL.Path] {
			_ = ew.Write(w, r, connect.NewError(connect.CodeInvalidArgument, errors.New("a Connect request needs the header Connect-Protocol-Version: 1 (this listener serves Connect, gRPC-Web and gRPC, not REST)")))
			return
		}
		if strings.HasPrefix(r.URL.Path, hostPrefix) {
			msg = tooldexv1.HostService_ServiceDesc.ServiceName + " is served on the gRPC port (--addr) only: host streams rely on its transport's keepalive"
		}
		_ = ew.Write(w, r, connect.NewError(connect.CodeUnimplemented, errors.New(msg)))
	})
}

// boundBody bounds a request's body to max bytes, and the time it may take
// to arrive to webBodyTimeout.
func boundBody(h http.Handler, max int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			http.Error(w, fmt.Sprintf("request body of %d bytes is larger than %d", r.ContentLength, max), http.StatusRequestEntityTooLarge)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(webBodyTimeout)); err == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		h.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the connection's read deadline once the body is read
// whole, so a long response (ExecuteStream) is not cut.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// jsonCodec is vanguard's JSON codec whose decoding errors are the
// client's: invalid_argument (vanguard's own answer is unknown, HTTP 500).
// The JSON codec decodes requests only: gs's responses are proto.
type jsonCodec struct{ *vanguard.JSONCodec }

func (c jsonCodec) Unmarshal(data []byte, msg proto.Message) error {
	if err := c.JSONCodec.Unmarshal(data, msg); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("request JSON: %w", err))
	}
	return nil
}

// errDecompressedTooLarge is a compressed message that inflates past the
// message bound.
var errDecompressedTooLarge = errors.New("decompressed message is larger than --max-message-bytes")

// boundedGzip is a gzip decompressor that fails past max bytes of output,
// so a small compressed body cannot inflate into gigabytes.
type boundedGzip struct {
	zr   *gzip.Reader
	n    int64
	max  int64
	fail bool
}

func (g *boundedGzip) Reset(r io.Reader) error {
	g.n, g.fail = 0, false
	if g.zr == nil {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		g.zr = zr
		return nil
	}
	return g.zr.Reset(r)
}

func (g *boundedGzip) Read(p []byte) (int, error) {
	if g.zr == nil {
		return 0, io.ErrUnexpectedEOF
	}
	if g.fail {
		return 0, g.tooLarge()
	}
	if room := g.max - g.n + 1; int64(len(p)) > room {
		p = p[:room] // one byte past max tells a too-large message
	}
	n, err := g.zr.Read(p)
	g.n += int64(n)
	if g.n > g.max {
		g.fail = true
		return 0, g.tooLarge()
	}
	return n, err
}

// tooLarge is the client's error: resource_exhausted, as for a message
// past the bound uncompressed.
func (g *boundedGzip) tooLarge() error {
	return connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("%w (%d bytes)", errDecompressedTooLarge, g.max))
}

func (g *boundedGzip) Close() error {
	if g.zr == nil {
		return nil
	}
	return g.zr.Close()
}

// withCORS answers CORS for the allowed origins: their preflights get 204
// with the methods and headers Connect and gRPC-Web use, their requests the
// Access-Control-Allow-Origin and exposed headers. A request from another
// origin is refused with 403 (a browser page elsewhere, or DNS rebinding
// onto a loopback listener); one without Origin (buf curl, servers) goes
// through untouched.
func withCORS(h http.Handler, allowed []string) http.Handler {
	set := origin.NewSet(allowed)
	allowHeaders := strings.Join([]string{
		"Authorization", "Content-Type", "Connect-Protocol-Version", "Connect-Timeout-Ms",
		"Connect-Accept-Encoding", "Connect-Content-Encoding", "Grpc-Timeout", "Grpc-Accept-Encoding",
		"Grpc-Encoding", "X-Grpc-Web", "X-User-Agent",
	}, ", ")
	exposeHeaders := strings.Join([]string{
		"Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin", "Grpc-Encoding", "Content-Encoding", "Connect-Content-Encoding",
	}, ", ")
	maxAge := fmt.Sprint(int(webCORSMaxAge.Seconds()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := r.Header.Get("Origin")
		if o == "" {
			h.ServeHTTP(w, r)
			return
		}
		if !set.Has(o) {
			http.Error(w, "origin "+o+" is not allowed (--web-allowed-origins)", http.StatusForbidden)
			return
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", o)
		hd.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hd.Set("Access-Control-Allow-Methods", "POST, GET")
			hd.Set("Access-Control-Allow-Headers", allowHeaders)
			hd.Set("Access-Control-Max-Age", maxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		hd.Set("Access-Control-Expose-Headers", exposeHeaders)
		h.ServeHTTP(w, r)
	})
}
